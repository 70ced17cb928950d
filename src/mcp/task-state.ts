// What an MCP task is, read from its row and its job: status, message, poll interval and result.
// Pure: the record and the time come in; storing and serving the task are left to the callers.

import { jobOutcomeLine } from "../../shared/outcome-line";
import { capText } from "../../shared/output-budget";
import type { TaskRecord } from "../session-object/mcp-tasks";
import { finishedAnswer, type ToolAnswer } from "./exec-tools";

export type TaskStatus = "working" | "completed" | "failed" | "cancelled";

/** The 2025-11-25 Task shape. */
export interface TaskShape {
  [key: string]: unknown;
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttl: number;
  pollInterval?: number;
}

const MIN_POLL_MS = 1_000;
const MAX_POLL_MS = 30_000;
const MESSAGE_MAX_CHARS = 500;

/** A tenth of the task's age, within 1 s and 30 s: a long job is asked about less and less. */
export const pollIntervalFor = (ageMs: number): number =>
  Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, Math.round(ageMs / 10)));

export function statusOf(record: TaskRecord): TaskStatus {
  // A terminal status never changes: a cancel stands even when the command's result follows.
  if (record.cancelledAt !== null) return "cancelled";
  if (record.job === null || record.job.status !== "running") return "completed";
  return "working";
}

const lastLines = (text: string): string =>
  text.length <= MESSAGE_MAX_CHARS
    ? text.trimEnd()
    : `…${text.slice(-MESSAGE_MAX_CHARS).trimEnd()}`;

const timeOf = (iso: string | null | undefined): number => (iso ? Date.parse(iso) : 0);

export function taskOf(record: TaskRecord, now: number): TaskShape {
  const status = statusOf(record);
  const job = record.job;
  const updated = Math.max(
    record.createdAt,
    record.cancelledAt ?? 0,
    timeOf(job?.completed_at),
    timeOf(job?.progress?.at),
  );
  const task: TaskShape = {
    taskId: record.taskId,
    status,
    createdAt: new Date(record.createdAt).toISOString(),
    lastUpdatedAt: new Date(updated).toISOString(),
    ttl: record.ttlMs,
  };
  if (status === "working") {
    task.pollInterval = pollIntervalFor(now - record.createdAt);
    const tail = job?.progress?.output_tail ?? "";
    task.statusMessage = tail === "" ? "running" : lastLines(tail);
  } else if (status === "cancelled") {
    task.statusMessage =
      job?.status === "running"
        ? "cancelled: the command was asked to stop"
        : "cancelled by the client";
  } else if (job !== null && job.status !== "running") {
    task.statusMessage = jobOutcomeLine(job);
  } else if (record.result !== null) {
    // A command that ended within its yield: its answer's first line is the outcome.
    const first = (answerOfStored(record.result).content[0]?.text ?? "").split("\n", 1)[0] ?? "";
    if (first !== "") task.statusMessage = first.slice(0, MESSAGE_MAX_CHARS);
  }
  return task;
}

/** The task's CallToolResult: the job's stored result, its own answer, or what a cancel left. */
export function resultOf(record: TaskRecord): ToolAnswer {
  const job = record.job;
  if (record.result !== null) return answerOfStored(record.result);
  if (job !== null && job.status !== "running")
    return finishedAnswer({ ...job, status: job.status });
  return {
    content: [
      {
        type: "text",
        text: `The task was cancelled; the command (session ID ${record.handle}) was asked to stop. Check its outcome with write_stdin(session_id="${record.handle}").`,
      },
    ],
    structuredContent: { session_id: record.handle, status: "running", cancelled: true },
    isError: true,
  };
}

/** The most of an inline answer's text a task row keeps (JSON escaping stays under a row's 2 MB). */
export const MAX_STORED_ANSWER_BYTES = 256 * 1024;

/** The key of a stored answer whose `structuredContent.output` is the text after its first line. */
const OUTPUT_IN_TEXT = "outputInText";

/**
 * An inline answer as a task row keeps it: the output once (the text holds it after the outcome
 * line; `structuredContent.output` repeated it), the text cut head and tail past the cap.
 */
export function storedAnswer(answer: ToolAnswer): string {
  const text = answer.content.map((part) => part.text).join("\n");
  const kept = capText(text, MAX_STORED_ANSWER_BYTES).text;
  const structured = answer.structuredContent;
  const { output, ...rest } = structured ?? {};
  const stored: Record<string, unknown> = { content: [{ type: "text", text: kept }] };
  if (structured !== undefined) stored.structuredContent = rest;
  if (typeof output === "string") stored[OUTPUT_IN_TEXT] = true;
  if (answer.isError !== undefined) stored.isError = answer.isError;
  return JSON.stringify(stored);
}

/** The answer a task row keeps, its `structuredContent.output` read back from its text. */
function answerOfStored(result: string): ToolAnswer {
  const { [OUTPUT_IN_TEXT]: outputInText, ...answer } = JSON.parse(result) as ToolAnswer;
  if (outputInText !== true || answer.structuredContent === undefined) return answer;
  const text = answer.content[0]?.text ?? "";
  const newline = text.indexOf("\n");
  const output = newline === -1 ? "" : text.slice(newline + 1);
  return { ...answer, structuredContent: { ...answer.structuredContent, output } };
}

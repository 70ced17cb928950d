// Builds inbox envelopes and the provider messages the model sees for them (contract section 5).
// Where envelopes are stored and when they are claimed is left to the inbox rules.
import { outcomeLine, shownExitCode } from "../../shared/outcome-line";
import type { Envelope, Instruction, Job, JobResult } from "./state";
import { resultInstruction } from "./state";
import { contentDigest, iso, utf8Bytes, utf8Tail } from "./text";

export const ENVELOPE_MAX_BYTES = 64 * 1024;
const RESULT_TAIL_BYTES = 16 * 1024;
const MESSAGE_TAIL_BYTES = 4 * 1024;

function envelope(
  instruction: Instruction,
  correlationId: string,
  identity: string,
  data: Record<string, unknown>,
  generation: number,
  now: number,
): Envelope {
  return {
    id: `env_${contentDigest(`${instruction}\n${identity}`)}`,
    generation,
    kind: "runtime_instruction",
    source: { type: "runtime", subsystem: "background_exec" },
    body: { type: "runtime_instruction", instruction, data },
    created_at: iso(now),
    correlation_id: correlationId,
  };
}

function resultText(job: Job, result: JobResult, tailBytes: number): string {
  const output = utf8Tail(result.output, tailBytes);
  return JSON.stringify({
    session_id: job.handle,
    status: result.status,
    exit_code: shownExitCode(result.status, result.exitCode),
    output,
    output_truncated: result.outputTruncated || output.length < result.output.length,
  });
}

/** The envelope a terminal result admits; `lost` gets the outcome-unknown instruction. */
export function completionEnvelope(
  job: Job,
  result: JobResult,
  generation: number,
  now: number,
): Envelope {
  // The reservation's seq makes a handle reserved again after a purge a different completion.
  const identity = `${job.lifetime}\n${job.handle}\n${job.seq}`;
  if (resultInstruction(result.status) === "background_exec_outcome_unknown") {
    return envelope(
      "background_exec_outcome_unknown",
      job.handle,
      identity,
      {
        session_id: job.handle,
        command: job.command,
        // Said plainly to the model: its runner vanished, not merely lost one process.
        ...(result.endedBy === null ? {} : { ended_by: result.endedBy }),
      },
      generation,
      now,
    );
  }
  // Shrink the tail until the envelope's JSON fits: escaping can grow output up to six-fold.
  for (let tail = RESULT_TAIL_BYTES; ; tail = Math.floor(tail / 2)) {
    const candidate = envelope(
      "background_exec_completed",
      job.handle,
      identity,
      {
        session_id: job.handle,
        command: job.command,
        status: result.status,
        // A killed, failed or lost command's message shows no exit code field (a failed one's is
        // in its outcome line); the job keeps what the runner sent.
        exit_code: shownExitCode(result.status, result.exitCode),
        // For the outcome line: who ended it, and how much it wrote when the output was cut.
        ended_by: result.endedBy,
        output_bytes_total: result.outputBytesTotalKnown === false ? null : result.outputBytesTotal,
        result: resultText(job, result, tail),
      },
      generation,
      now,
    );
    if (tail === 0 || utf8Bytes(JSON.stringify(candidate)) <= ENVELOPE_MAX_BYTES) return candidate;
  }
}

export function waitExpiredEnvelope(
  lifetime: string,
  handles: readonly string[],
  since: number,
  generation: number,
  now: number,
): Envelope {
  return envelope(
    "background_exec_wait_expired",
    handles.join(","),
    `${lifetime}\n${since}\n${handles.join(",")}`,
    { handles: [...handles] },
    generation,
    now,
  );
}

export interface ProviderMessage {
  readonly id: string;
  readonly role: "user";
  readonly content: string;
  readonly metadata: {
    readonly hidden_from_ui: true;
    readonly runtime_kind: Instruction;
    readonly session_message: {
      readonly id: string;
      readonly generation: number;
      readonly instruction: Instruction;
      readonly correlation_id: string;
    };
  };
}

const quote = (handle: string): string => `session_id="${handle}"`;

/** The first line of a message about one command: its handle and its outcome (outcome-line.ts). */
const headline = (handle: string, outcome: string): string =>
  `[runtime] Background command ${quote(handle)}: ${outcome}.`;

const textOrNull = (value: unknown): string | null => (typeof value === "string" ? value : null);

function completedText(data: Readonly<Record<string, unknown>>): string {
  const handle = String(data.session_id);
  const parsed = JSON.parse(String(data.result)) as { output: string; output_truncated: boolean };
  const tail = utf8Tail(parsed.output, MESSAGE_TAIL_BYTES);
  const cut = tail.length < parsed.output.length;
  // Envelopes stored before ended_by and output_bytes_total were carried decode without them.
  const outcome = outcomeLine({
    status: textOrNull(data.status),
    exitCode: typeof data.exit_code === "number" ? data.exit_code : null,
    endedBy: textOrNull(data.ended_by),
    outputTruncated: parsed.output_truncated || cut,
    outputBytesTotal: typeof data.output_bytes_total === "number" ? data.output_bytes_total : null,
  });
  return [
    headline(handle, outcome),
    `Command: ${String(data.command)}`,
    `Output${cut || parsed.output_truncated ? " (tail)" : ""}:`,
    tail === "" ? "(no output)" : tail,
    `Call write_stdin with ${quote(handle)} and empty chars to read the full result.`,
  ].join("\n");
}

function unknownOutcomeText(first: string, handles: readonly string[], why: string): string {
  const calls = handles.map((handle) => `write_stdin with ${quote(handle)}`).join(", ");
  return [
    first,
    why,
    "Completion is not confirmed: treat this as an unknown outcome, not a result.",
    `Check the current state with ${calls} before relying on any output.`,
  ].join("\n");
}

function contentFor(envelope: Envelope): string {
  const { instruction, data } = envelope.body;
  switch (instruction) {
    case "background_exec_completed":
      return completedText(data);
    case "background_exec_outcome_unknown":
      return unknownOutcomeText(
        headline(
          String(data.session_id),
          outcomeLine({
            status: "lost",
            exitCode: null,
            endedBy: textOrNull(data.ended_by),
            outputTruncated: false,
            outputBytesTotal: null,
          }),
        ),
        [String(data.session_id)],
        data.ended_by === "heartbeat_timeout"
          ? `The runner of the background command ${quote(String(data.session_id))} (${String(data.command)}) stopped sending heartbeats and is presumed gone with its machine: the command may have finished, failed or still be running there.`
          : `The runner lost track of the background command ${quote(String(data.session_id))} (${String(data.command)}).`,
      );
    case "background_exec_wait_expired": {
      const handles = (data.handles as string[]) ?? [];
      return unknownOutcomeText(
        `[runtime] Background commands ${handles.map(quote).join(", ")}: outcome unknown (wait ceiling).`,
        handles,
        `The wait for background commands ${handles.map(quote).join(", ")} reached its time ceiling.`,
      );
    }
  }
}

export function providerMessage(envelope: Envelope): ProviderMessage {
  const instruction = envelope.body.instruction;
  return {
    id: envelope.id,
    role: "user",
    content: contentFor(envelope),
    metadata: {
      hidden_from_ui: true,
      runtime_kind: instruction,
      session_message: {
        id: envelope.id,
        generation: envelope.generation,
        instruction,
        correlation_id: envelope.correlation_id,
      },
    },
  };
}

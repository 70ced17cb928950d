// docs/agent-kit.md "What a model reads" lists every text a kit shows a model. This holds the list
// to the real text functions both ways: each listed text is one the kits or the provider messages
// produce, and each text they produce is covered by the list, nothing left over.
import { readFileSync } from "node:fs";
import { ExecInboxError } from "@exec-inbox/client";
import { describe, expect, it } from "vitest";
import { execTools } from "../../agent/exec-tools";
import {
  backgroundNote,
  INPUT_NOT_SENT,
  lostNote,
  noCommand,
  outcomeLine,
  RECOVERED_ANSWERED,
  RECOVERED_FROM_JOURNAL,
  RECOVERED_INPUT_MAYBE_SENT,
  RECOVERED_NOT_AGAIN,
  RECOVERED_OTHER_DROPPED,
  RECOVERED_READ_DROPPED,
  RECOVERED_STORED,
  RECOVERED_UNKNOWN_OUTCOME,
  RECOVERED_WRITE_STDIN,
  RUNNER_FORGOT_NOTE,
  recoveredTailNote,
  recoveredUnknownNote,
  unreachableNote,
  untakenNote,
} from "../../agent/model-texts";
import { DEFAULT_SYSTEM } from "../../agent/turn-engine";
import { foreignSignalNote } from "../../runner/src/ending";
import {
  completionEnvelope,
  providerMessage,
  waitExpiredEnvelope,
} from "../../src/domain/messages";
import type { Job, JobResult } from "../../src/domain/state";

const DOC = readFileSync("docs/agent-kit.md", "utf8");

/** The first code span of each table row between the markers. */
function listedTexts(): string[] {
  const start = DOC.indexOf("<!-- model-texts:start -->");
  const end = DOC.indexOf("<!-- model-texts:end -->");
  return DOC.slice(start, end)
    .split("\n")
    .flatMap((line) => /^\| `([^`]+)` \|/.exec(line)?.[1] ?? []);
}

/** A listed text as a pattern: `<name>` stands for any value. */
const patternOf = (text: string, flags = ""): RegExp =>
  new RegExp(
    text
      .replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
      .replace(/<[A-Za-z_]+>$/, "[^\\n]+")
      .replace(/<[A-Za-z_]+>/g, "[^\\n]+?"),
    flags,
  );

const job: Job = {
  handle: "h1",
  seq: 1,
  command: "make test",
  lifetime: "lt-1",
  reservedAt: 0,
  callbackToken: "t",
  heartbeatTimeoutMs: null,
  lastHeartbeatAt: null,
  progress: null,
  cancelRequested: false,
  result: null,
} as Job;
const result = (over: Partial<JobResult>): JobResult => ({
  status: "completed",
  exitCode: 0,
  output: "",
  outputTruncated: false,
  outputBytesTotal: 0,
  endedBy: "process",
  ...over,
});
const runtime = (over: Partial<JobResult>) =>
  providerMessage(completionEnvelope(job, result(over), 1, 0)).content;

const problem = (status: number, code: string) =>
  new ExecInboxError({ type: "about:blank", title: code, status, code, detail: "D" } as never);

/** Every text the functions produce, for a sample of each case. */
async function producedTexts(): Promise<string[]> {
  let failing: ExecInboxError = problem(404, "not_found");
  const tools = execTools({
    inbox: {
      readFullOutput: async () => {
        throw failing;
      },
    },
  } as never);
  const read = () =>
    tools.read_output.execute?.(
      { session_id: "h1" },
      { toolCallId: "c", messages: [], context: {} },
    );
  const texts: string[] = [];
  texts.push(String(((await read()) as { error: string }).error));
  failing = problem(416, "range_not_satisfiable");
  texts.push(String(((await read()) as { error: string }).error));
  const grep = await tools.grep_output.execute?.(
    { session_id: "h1", pattern: "(", regex: true },
    { toolCallId: "c", messages: [], context: {} },
  );
  texts.push(String((grep as { error: string }).error));
  const facts = { endedBy: "process", outputTruncated: false, outputBytesTotal: 5 };
  texts.push(
    DEFAULT_SYSTEM,
    ...Object.values(tools).map((tool) => String(tool.description)),
    backgroundNote("h1", true),
    backgroundNote("h1", false),
    untakenNote(true, "E"),
    untakenNote(false, "E"),
    outcomeLine({ ...facts, status: "completed", exitCode: 3 }),
    outcomeLine({ ...facts, status: "killed", exitCode: null, endedBy: "kill_request" }),
    outcomeLine({ ...facts, status: "killed", exitCode: null, signal: "SIGKILL" }),
    outcomeLine({ ...facts, status: "lost", exitCode: null, endedBy: "heartbeat_timeout" }),
    outcomeLine({ ...facts, status: "failed", exitCode: null }),
    outcomeLine({ ...facts, status: "failed", exitCode: 0 }),
    outcomeLine({ ...facts, status: "completed", exitCode: 0, outputTruncated: true }),
    outcomeLine({ ...facts, status: "completed", exitCode: 0, endedBy: "kill_request" }),
    outcomeLine({ ...facts, status: "completed", exitCode: 0, endedBy: "memory_limit" }),
    outcomeLine({
      ...facts,
      status: "completed",
      exitCode: 1,
      outputTruncated: true,
      outputBytesTotal: null,
    }),
    foreignSignalNote("SIGKILL"),
    foreignSignalNote("SIGSEGV"),
    foreignSignalNote("SIGTERM"),
    lostNote("runner_shutdown"),
    lostNote("heartbeat_timeout"),
    RUNNER_FORGOT_NOTE,
    unreachableNote("T"),
    `${INPUT_NOT_SENT} ${unreachableNote("T")}`,
    noCommand("h1", true),
    noCommand("h1", false),
    runtime({ exitCode: 7, output: "x" }),
    runtime({ status: "killed", exitCode: null, endedBy: "runner_timeout" }),
    runtime({ exitCode: 1, output: "y".repeat(5000), outputTruncated: true, outputBytesTotal: 9 }),
    runtime({ status: "lost", exitCode: null, endedBy: "runner_shutdown" }),
    runtime({ status: "lost", exitCode: null, endedBy: "heartbeat_timeout" }),
    providerMessage(waitExpiredEnvelope("lt-1", ["h1"], 0, 1, 0)).content,
    `${RECOVERED_NOT_AGAIN} ${recoveredTailNote("T")} ${backgroundNote("h1", true)}`,
    `${RECOVERED_NOT_AGAIN} ${RECOVERED_STORED}`,
    recoveredUnknownNote("unasked"),
    recoveredUnknownNote("untaken", "h1"),
    recoveredUnknownNote("expired"),
    recoveredUnknownNote("dropped"),
    recoveredUnknownNote("ambiguous"),
    RECOVERED_ANSWERED,
    RECOVERED_FROM_JOURNAL,
    RECOVERED_UNKNOWN_OUTCOME,
    RECOVERED_INPUT_MAYBE_SENT,
    `${RECOVERED_FROM_JOURNAL} ${INPUT_NOT_SENT}`,
    `${RECOVERED_FROM_JOURNAL} ${untakenNote(true, "E")}`,
    `${RECOVERED_WRITE_STDIN} ${RECOVERED_INPUT_MAYBE_SENT}`,
    RECOVERED_READ_DROPPED,
    RECOVERED_OTHER_DROPPED,
  );
  return texts;
}

describe("the texts docs/agent-kit.md lists", () => {
  const listed = listedTexts();

  it("are the texts the kits and the provider messages produce", async () => {
    const produced = await producedTexts();
    // Two texts need a worker thread or a slow pattern to produce: their source stands for them.
    const corpus = [...produced, readFileSync("agent/output-tools.ts", "utf8")].join("\n");
    expect(listed.length).toBeGreaterThan(30);
    expect(listed.filter((text) => !patternOf(text).test(corpus))).toEqual([]);
  });

  it("leave nothing a model reads unlisted", async () => {
    // Longest first, so a listed sentence is taken whole before a shorter one inside it.
    const patterns = [...listed].sort((a, b) => b.length - a.length).map((t) => patternOf(t, "g"));
    const samples = ["x", "y+", "E", "T", "D", "h1", "make test", "SIGKILL", "3", "5"];
    const leftovers = (await producedTexts()).flatMap((text) => {
      let rest = text;
      for (const pattern of patterns) rest = rest.replace(pattern, " ");
      for (const sample of samples) rest = rest.replace(new RegExp(`\\b${sample}\\b`, "g"), " ");
      return /[A-Za-z]/.test(rest) ? [rest.trim()] : [];
    });
    expect(leftovers).toEqual([]);
  });
});

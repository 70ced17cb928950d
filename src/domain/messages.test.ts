import { describe, expect, it } from "vitest";
import { jobOutcomeLine, outcomeLine } from "../../shared/outcome-line";
import { completed, NO_LIVENESS, T0 } from "../../test/support/domain";
import {
  completionEnvelope,
  ENVELOPE_MAX_BYTES,
  providerMessage,
  waitExpiredEnvelope,
} from "./messages";
import type { Job } from "./state";
import { utf8Bytes, utf8Tail } from "./text";

const job: Job = {
  handle: "h1",
  seq: 1,
  command: "make test",
  lifetime: "lt-1",
  reservedAt: T0,
  callbackToken: "t",
  ...NO_LIVENESS,
  result: null,
};

const UNKNOWN_TEXTS = [
  providerMessage(waitExpiredEnvelope("lt-1", ["h1", "h2"], T0, 3, T0)).content,
  providerMessage(
    completionEnvelope(job, completed(0, "", { status: "lost", exitCode: null }), 4, T0),
  ).content,
];

describe("provider messages", () => {
  it("a completion tells the model to pull with write_stdin and never mentions BashOutput", () => {
    const message = providerMessage(completionEnvelope(job, completed(7, "inbox-result"), 1, T0));
    expect(message.content).toContain('session_id="h1"');
    expect(message.content).toContain("make test");
    expect(message.content.split("\n")[0]).toBe(
      '[runtime] Background command session_id="h1": exited with code 7.',
    );
    expect(message.content).toContain("inbox-result");
    expect(message.content).toContain("write_stdin");
    expect(message.content).not.toContain("BashOutput");
    expect(message.metadata).toEqual({
      hidden_from_ui: true,
      runtime_kind: "background_exec_completed",
      session_message: {
        id: message.id,
        generation: 1,
        instruction: "background_exec_completed",
        correlation_id: "h1",
      },
    });
  });

  it("a wait ceiling or a lost process never claims completion", () => {
    for (const text of UNKNOWN_TEXTS) {
      expect(text).toContain("Completion is not confirmed");
      expect(text).toContain("unknown outcome");
      expect(text).toContain("write_stdin");
      expect(text).not.toMatch(/have completed|finished/i);
    }
  });

  it("the first line states how a command ended: a killed or lost one never reads as an exit", () => {
    const firstLine = (result: Parameters<typeof completionEnvelope>[1]) =>
      providerMessage(completionEnvelope(job, result, 1, T0)).content.split("\n")[0];
    const killed = firstLine(
      completed(0, "", { status: "killed", exitCode: null, endedBy: "runner_timeout" }),
    );
    expect(killed).toBe('[runtime] Background command session_id="h1": killed (runner_timeout).');
    const lost = firstLine(
      completed(0, "", { status: "lost", exitCode: null, endedBy: "heartbeat_timeout" }),
    );
    expect(lost).toBe(
      '[runtime] Background command session_id="h1": outcome unknown (heartbeat_timeout).',
    );
    // Even a runner that sent killed with an exit code of 0 is not read as one.
    const killedZero = firstLine(completed(0, "", { status: "killed", endedBy: "process" }));
    expect(killedZero).toContain("killed (process)");
    for (const line of [killed, lost, killedZero]) expect(line).not.toMatch(/exit|code 0/);
  });

  it("a killed command's envelope shows no exit code, though the runner sent one", () => {
    const envelope = completionEnvelope(
      job,
      completed(0, "x", { status: "killed", endedBy: "runner_timeout" }),
      1,
      T0,
    );
    expect(envelope.body.data.exit_code).toBe(null);
    expect(JSON.parse(String(envelope.body.data.result))).toMatchObject({ exit_code: null });
  });

  it("an exit a kill request or the runner's shutdown brought about says so on the first line", () => {
    const first = (endedBy: "kill_request" | "runner_shutdown" | "runner_timeout") =>
      providerMessage(
        completionEnvelope(job, completed(0, "bye", { endedBy }), 1, T0),
      ).content.split("\n")[0];
    expect([first("kill_request"), first("runner_shutdown"), first("runner_timeout")]).toEqual([
      '[runtime] Background command session_id="h1": exited with code 0 after a kill request (kill_request).',
      '[runtime] Background command session_id="h1": exited with code 0 after the runner\'s shutdown (runner_shutdown).',
      '[runtime] Background command session_id="h1": exited with code 0 after the runner\'s timeout (runner_timeout).',
    ]);
  });

  it("the first line of a cut output whose runner sent no total says only that it was cut", () => {
    const result = completed(1, "head…tail", {
      outputTruncated: true,
      outputBytesTotal: 9,
      outputBytesTotalKnown: false,
    });
    const envelope = completionEnvelope(job, result, 1, T0);
    expect(envelope.body.data.output_bytes_total).toBe(null);
    expect(providerMessage(envelope).content.split("\n")[0]).toBe(
      '[runtime] Background command session_id="h1": exited with code 1; output cut.',
    );
  });

  it("the first line of a cut output gives the bytes it had in total", () => {
    const output = `${"a".repeat(1000)}…[10484760 bytes omitted]…${"z".repeat(1000)}`;
    const result = completed(1, output, { outputTruncated: true, outputBytesTotal: 10_485_760 });
    const content = providerMessage(completionEnvelope(job, result, 1, T0)).content;
    expect(content.split("\n")[0]).toBe(
      '[runtime] Background command session_id="h1": exited with code 1; output cut, 10485760 bytes in total.',
    );
  });

  it("an envelope stored before it carried ended_by still reads its outcome, never as an exit", () => {
    const envelope = completionEnvelope(
      job,
      completed(0, "x", { status: "killed", exitCode: null }),
      1,
      T0,
    );
    const { ended_by: _e, output_bytes_total: _o, ...older } = envelope.body.data;
    const content = providerMessage({
      ...envelope,
      body: { ...envelope.body, data: older },
    }).content;
    expect(content.split("\n")[0]).toContain("killed (not reported)");
  });

  it("the message shows at most a 4 KiB tail of the output", () => {
    const output = `${"a".repeat(10_000)}END`;
    const content = providerMessage(completionEnvelope(job, completed(0, output), 1, T0)).content;
    expect(content).toContain("END");
    expect(content.length).toBeLessThan(4096 + 400);
  });
});

describe("envelopes", () => {
  it("the same completion always gets the same id, another result of another job another id", () => {
    const one = completionEnvelope(job, completed(0, "x"), 1, T0);
    expect(completionEnvelope(job, completed(0, "x"), 1, T0 + 5).id).toBe(one.id);
    expect(completionEnvelope({ ...job, handle: "h2" }, completed(0, "x"), 1, T0).id).not.toBe(
      one.id,
    );
  });

  it("an envelope stays within 64 KiB even when the output escapes to six times its size", () => {
    const output = "\u0001".repeat(250_000);
    const envelope = completionEnvelope(
      { ...job, command: "\u0002".repeat(8000) },
      completed(0, output),
      1,
      T0,
    );
    expect(utf8Bytes(JSON.stringify(envelope))).toBeLessThanOrEqual(ENVELOPE_MAX_BYTES);
    expect(JSON.parse(String(envelope.body.data.result)).output_truncated).toBe(true);
  });

  it("the result keeps a tail of at most 16 KiB cut on a UTF-8 boundary", () => {
    const output = "é".repeat(20_000);
    const result = JSON.parse(
      String(completionEnvelope(job, completed(0, output), 1, T0).body.data.result),
    );
    expect(utf8Bytes(result.output)).toBeLessThanOrEqual(16 * 1024);
    expect(result.output).toMatch(/^é+$/);
    expect(result.output_truncated).toBe(true);
  });

  it("a UTF-8 tail never starts inside a character", () => {
    expect(utf8Tail("a😀b", 5)).toBe("😀b");
    expect(utf8Tail("a😀b", 4)).toBe("b");
    expect(utf8Tail("abc", 10)).toBe("abc");
  });
});

describe("the outcome line", () => {
  const facts = { endedBy: "process", outputTruncated: false, outputBytesTotal: 12 };
  it("says exited only for an exit code, and names who ended a killed or lost command", () => {
    expect([
      outcomeLine({ ...facts, status: "completed", exitCode: 0 }),
      outcomeLine({ ...facts, status: "failed", exitCode: 2 }),
      outcomeLine({ ...facts, status: "killed", exitCode: null, signal: "SIGKILL" }),
      outcomeLine({ ...facts, status: "killed", exitCode: 0, endedBy: "kill_request" }),
      outcomeLine({ ...facts, status: "lost", exitCode: null, endedBy: "runner_shutdown" }),
      outcomeLine({ ...facts, status: "failed", exitCode: null }),
      outcomeLine({ ...facts, status: null, exitCode: null, endedBy: null }),
    ]).toEqual([
      "exited with code 0",
      "failed (exit code 2, process)",
      "killed (process, SIGKILL)",
      "killed (kill_request)",
      "outcome unknown (runner_shutdown)",
      "failed without an exit code (process)",
      "outcome unknown (not reported)",
    ]);
  });

  it("a failed command never reads as exit code 0, whatever exit code its runner sent", () => {
    // The completion API takes `status: "failed"` with `exit_code: 0`; the model must not read it
    // as a success (the provider message, the kits' write_stdin and the MCP result all lead with it).
    const line = outcomeLine({ ...facts, status: "failed", exitCode: 0 });
    expect(line).not.toBe("exited with code 0");
    expect(line).toMatch(/^failed/);
    const first = providerMessage(
      completionEnvelope(job, completed(0, "", { status: "failed" }), 1, T0),
    ).content.split("\n")[0];
    expect(first).not.toMatch(/exited with code 0\.$/);
  });

  it("gives the total bytes only when the output was cut", () => {
    expect(outcomeLine({ ...facts, status: "completed", exitCode: 0, outputTruncated: true })).toBe(
      "exited with code 0; output cut, 12 bytes in total",
    );
    expect(
      outcomeLine({
        ...facts,
        status: "completed",
        exitCode: 0,
        outputTruncated: true,
        outputBytesTotal: null,
      }),
    ).toBe("exited with code 0; output cut");
  });
});

describe("the outcome line of a job as the API shows it", () => {
  it("states no total for a cut output whose total is not known", () => {
    const job = {
      status: "completed",
      exit_code: 1,
      ended_by: "process",
      output_truncated: true,
      output_bytes_total: 36,
      output_bytes_total_known: false,
    };
    expect(jobOutcomeLine(job)).toBe("exited with code 1; output cut");
  });

  it("reads the pull's fields, and says cut when the caller cut the output further", () => {
    const job = {
      status: "killed",
      exit_code: null,
      ended_by: "memory_limit",
      output_truncated: false,
      output_bytes_total: 70,
    };
    expect(jobOutcomeLine(job)).toBe("killed (memory_limit)");
    expect(jobOutcomeLine(job, true)).toBe("killed (memory_limit); output cut, 70 bytes in total");
  });
});

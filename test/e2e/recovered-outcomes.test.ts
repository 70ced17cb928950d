// What a recovered call reads, for every state exec-inbox and the journal can be in (fakes of the
// client methods recovery calls; no wrangler, no runner): the outcome leads, and a killed, lost,
// failed or unknown command never reads as a success or as exit code 0.
import {
  type JournaledCall,
  type RecoveredToolCall,
  recoverOpenCalls,
  recoverToolCalls,
} from "@exec-inbox/ai-sdk";
import { ExecInboxError, type JobView } from "@exec-inbox/client";
import { describe, expect, it } from "vitest";

const problem = (status: number, code: string) =>
  new ExecInboxError({ type: "about:blank", title: code, status, code, detail: code } as never);

const job = (over: Partial<JobView>): JobView =>
  ({
    handle: "h1",
    command: "make",
    lifetime: "l1",
    status: "completed",
    exit_code: 0,
    output: "built",
    output_truncated: false,
    output_bytes_total: 5,
    ended_by: "process",
    reserved_at: "",
    completed_at: "",
    heartbeat_timeout_ms: null,
    last_heartbeat_at: null,
    progress: null,
    cancel_requested: false,
    full_output: null,
    ...over,
  }) as JobView;

/** An inbox whose jobs are `jobs` (a thrown problem for a handle mapped to one). */
function fakeInbox(jobs: Record<string, JobView | ExecInboxError>, reserve?: () => unknown) {
  const asked: string[] = [];
  const reserved: string[] = [];
  const inbox = {
    getJob: async (_sid: string, handle: string) => {
      asked.push(handle);
      const found = jobs[handle];
      if (found === undefined) throw problem(404, "not_found");
      if (found instanceof ExecInboxError) throw found;
      return found;
    },
    getSession: async () => ({ wake: { via: null } }),
    reserveJob: async (_sid: string, input: { handle: string }) => {
      reserved.push(input.handle);
      if (reserve === undefined) throw problem(422, "invalid_request");
      return reserve();
    },
  };
  return { inbox: inbox as never, asked, reserved };
}

const exec = (over: Partial<JournaledCall>): JournaledCall => ({
  toolCallId: "c1",
  toolName: "exec_command",
  input: { cmd: "make" },
  handle: "h1",
  answer: null,
  ...over,
});

const one = async (
  jobs: Record<string, JobView | ExecInboxError>,
  call: JournaledCall,
): Promise<RecoveredToolCall> => {
  const [recovered] = await recoverToolCalls(fakeInbox(jobs).inbox, "s1", [call]);
  return recovered!;
};

/** What the model reads of a result, in the order it reads it. */
const text = (result: Readonly<Record<string, unknown>>) => JSON.stringify(result);

/** A result that must not pass for a success: no exit 0, no completed status. */
function neverASuccess(result: Readonly<Record<string, unknown>>) {
  expect(text(result)).not.toMatch(/exited with code (0|null)/);
  expect(result.status).not.toBe("completed");
  expect(result.exit_code ?? null).toBeNull();
}

describe("a journaled exec_command with a handle, recovered from its job", () => {
  it("a job that exited 0 leads with 'exited with code 0' and its stored output", async () => {
    const { result, running } = await one({ h1: job({}) }, exec({}));
    expect(Object.keys(result)[0]).toBe("outcome");
    expect(result).toMatchObject({
      outcome: "exited with code 0",
      status: "completed",
      exit_code: 0,
      output: "built",
      note: expect.stringContaining("not started again"),
    });
    expect(running).toBeNull();
  });

  it("a job that exited 3 leads with 'exited with code 3'", async () => {
    const { result } = await one({ h1: job({ exit_code: 3 }) }, exec({}));
    expect(Object.keys(result)[0]).toBe("outcome");
    expect(result.outcome).toBe("exited with code 3");
    expect(result.exit_code).toBe(3);
  });

  it("a job that failed to start leads with a failure without an exit code", async () => {
    const { result } = await one({ h1: job({ status: "failed", exit_code: null }) }, exec({}));
    expect(Object.keys(result)[0]).toBe("outcome");
    expect(result.outcome).toBe("failed without an exit code (process)");
    neverASuccess(result);
  });

  for (const endedBy of ["process", "kill_request"] as const) {
    it(`a job killed by ${endedBy} leads with 'killed (${endedBy})'`, async () => {
      const { result } = await one(
        { h1: job({ status: "killed", exit_code: null, ended_by: endedBy }) },
        exec({}),
      );
      expect(Object.keys(result)[0]).toBe("outcome");
      expect(result.outcome).toBe(`killed (${endedBy})`);
      neverASuccess(result);
    });
  }

  for (const endedBy of ["heartbeat_timeout", "runner_shutdown"] as const) {
    it(`a job lost by ${endedBy} leads with 'outcome unknown (${endedBy})' and says it is not a result`, async () => {
      const { result } = await one(
        { h1: job({ status: "lost", exit_code: null, ended_by: endedBy, output: "" }) },
        exec({}),
      );
      expect(Object.keys(result)[0]).toBe("outcome");
      expect(result.outcome).toBe(`outcome unknown (${endedBy})`);
      expect(result.note).toMatch(/outcome is unknown, not a result/);
      neverASuccess(result);
    });
  }

  it("a job whose record expired reads as outcome unknown", async () => {
    const { result } = await one({ h1: problem(410, "job_expired") }, exec({}));
    expect(Object.keys(result)[0]).toBe("outcome");
    expect(result).toMatchObject({ outcome: "outcome unknown (not reported)", status: "unknown" });
    expect(result.note).toMatch(/no longer keeps its result/);
    neverASuccess(result);
  });

  it("a running job reads as running with its last progress, and promises no wake the session has no path for", async () => {
    const progress = { at: "T1", output_tail: "50%", output_bytes_total: 3 };
    const { result, running } = await one(
      { h1: job({ status: "running", exit_code: null, ended_by: null, progress } as never) },
      exec({}),
    );
    expect(running).toBe("h1");
    expect(result).toMatchObject({ session_id: "h1", status: "running", output: "50%" });
    expect(result.note).toMatch(
      /not started again.*tail it last reported, at T1.*Nothing will wake you/,
    );
    expect(result).not.toHaveProperty("outcome");
  });
});

describe("a journaled exec_command whose handle exec-inbox never took", () => {
  it("is reserved and armed as exec_command would have, and recovers as running", async () => {
    const callback = { url: "u", token: "t" };
    const fake = fakeInbox({}, () => ({
      job: job({ status: "running", exit_code: null, ended_by: null }),
      callback,
      will_wake: true,
    }));
    const armed: unknown[] = [];
    const runner = {
      armCallback: async (handle: string, cb: unknown) => void armed.push([handle, cb]),
    };
    const [call] = await recoverToolCalls(fake.inbox, "s1", [exec({})], {
      runner: runner as never,
    });
    expect(fake.reserved).toEqual(["h1"]);
    expect(armed).toEqual([["h1", callback]]);
    expect(call!.running).toBe("h1");
    expect(call!.result).toMatchObject({ status: "running", will_wake: true });
  });

  it("that cannot be reserved reads as outcome unknown, and is not sent to write_stdin", async () => {
    const fake = fakeInbox({});
    const runner = { armCallback: async () => {} };
    const [call] = await recoverToolCalls(fake.inbox, "s1", [exec({})], {
      runner: runner as never,
    });
    expect(fake.reserved).toEqual(["h1"]);
    expect(Object.keys(call!.result)[0]).toBe("outcome");
    expect(call!.result.outcome).toBe("outcome unknown (not reported)");
    expect(call!.result.note).not.toContain("write_stdin");
    expect(call!.running).toBeNull();
    neverASuccess(call!.result);
  });

  it("without a runner to arm it, is not reserved and reads as outcome unknown", async () => {
    const fake = fakeInbox({}, () => {
      throw new Error("must not reserve");
    });
    const [call] = await recoverToolCalls(fake.inbox, "s1", [exec({})]);
    expect(fake.reserved).toEqual([]);
    expect(call!.result.outcome).toBe("outcome unknown (not reported)");
    neverASuccess(call!.result);
  });
});

describe("a journaled exec_command the tool itself could not hand to exec-inbox", () => {
  it("keeps the tool's answer (stopped) and is never reserved late", async () => {
    const fake = fakeInbox({}, () => {
      throw new Error("must not reserve");
    });
    const answer = {
      session_id: "h1",
      output: "",
      status: "killed",
      note: "The command was stopped.",
    };
    const [call] = await recoverToolCalls(fake.inbox, "s1", [exec({ answer })], {
      runner: { armCallback: async () => {} } as never,
    });
    expect(fake.reserved).toEqual([]);
    expect(call!.result).toMatchObject({ status: "killed" });
    expect(call!.result.note).toMatch(/not made again\. The command was stopped\./);
    neverASuccess(call!.result);
  });
});

describe("a journaled call in each journal state", () => {
  it("begun only (the runner's answer never recorded) reads as outcome unknown and asks nothing", async () => {
    const fake = fakeInbox({ h1: job({}) });
    const [call] = await recoverToolCalls(fake.inbox, "s1", [exec({ handle: null })]);
    expect(fake.asked).toEqual([]);
    expect(Object.keys(call!.result)[0]).toBe("outcome");
    expect(call!.result.outcome).toBe("outcome unknown (not reported)");
    expect(call!.result.note).toMatch(/may or may not have run/);
    neverASuccess(call!.result);
  });

  it("answered within its yield leads with the answer's outcome and says it was not started again", async () => {
    const answer = { exit_code: 3, output: "boom", status: "completed", ended_by: "process" };
    const { result } = await one({}, exec({ handle: null, answer }));
    expect(Object.keys(result)[0]).toBe("outcome");
    expect(result).toMatchObject({ outcome: "exited with code 3", exit_code: 3, output: "boom" });
    expect(result.note).toContain("not started again");
  });

  it("answered as killed by a signal reads as killed, never as an exit", async () => {
    const answer = {
      exit_code: null,
      output: "",
      status: "killed",
      ended_by: "process",
      signal: "SIGKILL",
    };
    const { result } = await one({}, exec({ handle: null, answer }));
    expect(result.outcome).toBe("killed (process, SIGKILL)");
    neverASuccess(result);
  });

  it("a write_stdin begun only says its input may have been sent and must not be sent again", async () => {
    const { result } = await one(
      { h1: job({}) },
      exec({ toolName: "write_stdin", input: { session_id: "h1", chars: "y\n" }, handle: null }),
    );
    expect(result.status).toBe("unknown");
    expect(result.note).toMatch(/possibly sent.*Do not send it again.*empty chars/);
  });

  it("a write_stdin answered gives its answer with a note that the call was not made again", async () => {
    const answer = { output: "ok", session_id: "h1" };
    const { result } = await one(
      {},
      exec({
        toolName: "write_stdin",
        input: { session_id: "h1", chars: "y\n" },
        handle: null,
        answer,
      }),
    );
    expect(result).toMatchObject({ output: "ok", note: expect.stringContaining("not made again") });
  });
});

describe("calls a compaction left without a result", () => {
  const open = (toolName: string, input: Record<string, unknown>, toolCallId = "c1") => ({
    toolCallId,
    toolName,
    input,
  });

  it("an exec_command whose one kept handle was killed reads as killed", async () => {
    const fake = fakeInbox({
      h1: job({ status: "killed", exit_code: null, ended_by: "kill_request" }),
    });
    const [call] = await recoverOpenCalls(
      fake.inbox,
      "s1",
      [open("exec_command", { cmd: "make" })],
      new Map([["c1", ["h1"]]]),
    );
    expect(call!.result.outcome).toBe("killed (kill_request)");
    expect(call!.result.note).not.toContain("restarted");
    neverASuccess(call!.result);
  });

  it("an exec_command whose kept handle has no job reads as unknown and is not reserved", async () => {
    const fake = fakeInbox({}, () => {
      throw new Error("must not reserve");
    });
    const [call] = await recoverOpenCalls(
      fake.inbox,
      "s1",
      [open("exec_command", { cmd: "make" })],
      new Map([["c1", ["h1"]]]),
    );
    expect(fake.reserved).toEqual([]);
    expect(call!.result.outcome).toBe("outcome unknown (not reported)");
    neverASuccess(call!.result);
  });

  it("an exec_command id kept with two handles reads as unknown, never as either job", async () => {
    const fake = fakeInbox({ h1: job({}), h2: job({ exit_code: 3 }) });
    const [call] = await recoverOpenCalls(
      fake.inbox,
      "s1",
      [open("exec_command", { cmd: "make" })],
      new Map([["c1", ["h1", "h2"]]]),
    );
    expect(fake.asked).toEqual([]);
    expect(call!.result.outcome).toBe("outcome unknown (not reported)");
    expect(call!.result.note).toMatch(/more than one command/);
    neverASuccess(call!.result);
  });

  it("a write_stdin that sent characters gets its job's truth and is told not to send them again", async () => {
    const fake = fakeInbox({
      h1: job({ status: "lost", exit_code: null, ended_by: "heartbeat_timeout" }),
    });
    const [call] = await recoverOpenCalls(
      fake.inbox,
      "s1",
      [open("write_stdin", { session_id: "h1", chars: "y\n" })],
      new Map(),
    );
    expect(Object.keys(call!.result)[0]).toBe("outcome");
    expect(call!.result.outcome).toBe("outcome unknown (heartbeat_timeout)");
    expect(call!.result.note).toMatch(/Do not send it again/);
    neverASuccess(call!.result);
  });

  it("a write_stdin that only read a running job gets the job's progress", async () => {
    const progress = { at: "T2", output_tail: "still", output_bytes_total: 5 };
    const fake = fakeInbox({
      h1: job({ status: "running", exit_code: null, ended_by: null, progress } as never),
    });
    const [call] = await recoverOpenCalls(
      fake.inbox,
      "s1",
      [open("write_stdin", { session_id: "h1" })],
      new Map(),
    );
    expect(call!.result).toMatchObject({ status: "running", output: "still" });
    expect(call!.result.note).not.toMatch(/Do not send/);
  });

  it("read_output and another tool's calls are closed with a note, and exec-inbox is not asked", async () => {
    const fake = fakeInbox({});
    const calls = await recoverOpenCalls(
      fake.inbox,
      "s1",
      [open("read_output", { session_id: "h1" }, "r1"), open("lookup", { q: "x" }, "o1")],
      new Map(),
    );
    expect(fake.asked).toEqual([]);
    expect(calls.map((call) => [call.toolCallId, call.result.status])).toEqual([
      ["r1", "dropped"],
      ["o1", "dropped"],
    ]);
    expect(calls[0]!.result.note).toMatch(/ask for it again/);
    expect(calls[1]!.result.note).toMatch(/what it did is unknown/);
  });
});

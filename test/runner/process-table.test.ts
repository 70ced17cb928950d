import { readdirSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { completionFor } from "../../runner/src/completion";
import {
  clampYield,
  MAX_LIVE_PROCESSES,
  ProcessTable,
  TooManyProcesses,
} from "../../runner/src/process-table";

let table: ProcessTable;

/** The process group of the one process whose command line is `command`, found in /proc. */
async function processGroupOf(command: string): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ").trim() !== command)
          continue;
        const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
      } catch {
        // Gone meanwhile.
      }
    }
    await sleep(100);
  }
  throw new Error(`no process runs ${command}`);
}
afterEach(async () => {
  await table?.shutdown();
});

describe("runner process table (real processes)", () => {
  it("clamps yield_time_ms to 250–30000 with a 10000 default", () => {
    expect([
      clampYield(undefined),
      clampYield(0),
      clampYield(100),
      clampYield(5000),
      clampYield(99_999),
    ]).toEqual([10_000, 250, 250, 5000, 30_000]);
  });

  it("a command that exits within the yield returns its exit code and output, no handle", async () => {
    table = new ProcessTable();
    const answer = await table.execCommand({ cmd: "printf hi; exit 3", yield_time_ms: 5000 });
    expect(answer).toMatchObject({ exit_code: 3, output: "hi" });
    expect(answer.session_id).toBeUndefined();
  });

  it("a command that outlives the yield hands back a session_id with the output so far", async () => {
    table = new ProcessTable();
    const answer = await table.execCommand({
      cmd: "printf early; sleep 1; printf late; exit 5",
      yield_time_ms: 300,
    });
    expect(answer.session_id).toBeDefined();
    expect(answer.output).toBe("early");
    expect(answer.exit_code).toBeUndefined();
    const polled = await table.writeStdin({ session_id: answer.session_id!, yield_time_ms: 5000 });
    expect(polled).toMatchObject({ exit_code: 5, output: "late" });
  });

  it("an exited session stays readable: the same final answer again", async () => {
    table = new ProcessTable();
    const started = await table.execCommand({
      cmd: "sleep 0.3; printf result; exit 2",
      yield_time_ms: 250,
    });
    const first = await table.writeStdin({ session_id: started.session_id!, yield_time_ms: 5000 });
    const second = await table.writeStdin({ session_id: started.session_id!, yield_time_ms: 5000 });
    expect(first).toMatchObject({ exit_code: 2, output: "result" });
    expect(second).toEqual(first);
  });

  it("a kill -9 of the command's process group from outside reads as killed with the signal named, never as an exit", async () => {
    table = new ProcessTable();
    const marker = 3000 + Math.floor(Math.random() * 900);
    const started = await table.execCommand({
      cmd: `echo started; sleep ${marker}.5; echo never`,
      yield_time_ms: 300,
    });
    const handle = started.session_id!;
    const group = await processGroupOf(`sleep ${marker}.5`);
    process.kill(-group, "SIGKILL");
    const final = await table.writeStdin({ session_id: handle, yield_time_ms: 10_000 });
    expect(final).toMatchObject({
      exit_code: null,
      status: "killed",
      ended_by: "process",
      signal: "SIGKILL",
    });
    const completion = completionFor(table.get(handle), false);
    expect(completion).toMatchObject({ status: "killed", exit_code: null, ended_by: "process" });
    expect(completion.output).toContain(
      "[exec-inbox-runner] killed by SIGKILL, a signal the runner did not send",
    );
    // The runner's line is not counted: output_bytes_total is what the command wrote.
    expect(completion.output_bytes_total).toBe(Buffer.byteLength("started\n"));
  });

  it("a command's own exit and a kill the model asked for name no foreign signal", async () => {
    table = new ProcessTable();
    const exited = await table.execCommand({ cmd: "printf ok; exit 3", yield_time_ms: 5000 });
    expect(exited).toMatchObject({ exit_code: 3, status: "completed", ended_by: "process" });
    expect(exited).not.toHaveProperty("signal");
    const started = await table.execCommand({ cmd: "sleep 30", yield_time_ms: 250 });
    table.kill(started.session_id!);
    const killed = await table.killed(started.session_id!);
    expect(killed).toMatchObject({ exit_code: null, status: "killed", ended_by: "kill_request" });
    const completion = completionFor(table.get(started.session_id!), false);
    expect(completion.ended_by).toBe("kill_request");
    expect(completion.output).not.toContain("a signal the runner did not send");
  });

  it("write_stdin writes chars to the process", async () => {
    table = new ProcessTable();
    const started = await table.execCommand({
      cmd: "read line; echo got:$line",
      yield_time_ms: 250,
    });
    const answer = await table.writeStdin({
      session_id: started.session_id!,
      chars: "ping\n",
      yield_time_ms: 5000,
    });
    expect(answer).toMatchObject({ exit_code: 0, output: "got:ping\n" });
  });

  it("runs with NO_COLOR=1 and TERM=dumb", async () => {
    table = new ProcessTable();
    const answer = await table.execCommand({
      cmd: 'printf "$NO_COLOR $TERM"',
      yield_time_ms: 5000,
    });
    expect(answer.output).toBe("1 dumb");
  });

  it("long output comes back as head + marker + tail within max_output_tokens", async () => {
    table = new ProcessTable();
    const answer = await table.execCommand({
      cmd: "printf START; head -c 200000 /dev/zero | tr '\\0' x; printf END",
      yield_time_ms: 10_000,
      max_output_tokens: 100,
    });
    expect(answer.output.startsWith("START")).toBe(true);
    expect(answer.output.endsWith("END")).toBe(true);
    expect(answer.output).toMatch(/bytes omitted/);
    expect(answer.output_bytes_total).toBe(200_008);
    expect(answer.output_bytes_dropped).toBeGreaterThan(199_000);
  });

  it(`refuses a 65th live process with a clear error`, async () => {
    table = new ProcessTable();
    for (let i = 0; i < MAX_LIVE_PROCESSES; i += 1) table.start("sleep 30", undefined);
    expect(table.liveCount).toBe(MAX_LIVE_PROCESSES);
    expect(() => table.start("true", undefined)).toThrow(TooManyProcesses);
    expect(() => table.start("true", undefined)).toThrow(/at most 64 processes/);
  }, 20_000);
});

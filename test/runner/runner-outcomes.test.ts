// How the reference runner reports a command's end, read through the kits' outcome line: a signal
// only on evidence (a command's own `exit 137` in the sandbox is an exit), output_bytes_total counts
// only what the command wrote, and an exit 0 a kill request brought about says so.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { withOutcome } from "../../agent/exec-tools";
import type { ExecAnswer } from "../../agent/runner-client";
import { completionFor } from "../../runner/src/completion";
import { exitOf } from "../../runner/src/exit-status";
import { embeddedPlan } from "../../runner/src/launch";
import { ProcessTable } from "../../runner/src/process-table";

let table: ProcessTable;
let spoolDir: string | null = null;
afterEach(async () => {
  await table?.shutdown();
  if (spoolDir !== null) rmSync(spoolDir, { recursive: true, force: true });
  spoolDir = null;
});

/** The outcome line the kits lead a runner's answer with. */
const outcomeOf = (answer: object): string => withOutcome(answer as ExecAnswer).outcome;

describe("outcomes the reference runner reports", () => {
  it("in the sandbox, bwrap's exit 128 + N reads as signal N only when the runner sent N; the leader's own signal always counts", () => {
    expect(exitOf(137, null, true)).toEqual({ kind: "exited", exitCode: 137 });
    expect(exitOf(143, null, true, new Set(["SIGKILL"]))).toEqual({
      kind: "exited",
      exitCode: 143,
    });
    expect(exitOf(143, null, true, new Set(["SIGTERM"]))).toEqual({
      kind: "signaled",
      signal: "SIGTERM",
    });
    // Outside the sandbox the shell's own exit code is never a signal.
    expect(exitOf(143, null, false, new Set(["SIGTERM"]))).toEqual({
      kind: "exited",
      exitCode: 143,
    });
    expect(exitOf(null, "SIGKILL", true)).toEqual({ kind: "signaled", signal: "SIGKILL" });
  });

  it("a command's own exit 137 reads as exited with code 137, not as a SIGKILL from outside", async () => {
    // The default table runs bwrap where it works, as a deployed runner does.
    table = new ProcessTable();
    const started = await table.execCommand({ cmd: "printf x; exit 137", yield_time_ms: 10_000 });
    expect(outcomeOf(started)).toBe("exited with code 137");
    const handle = (await table.execCommand({ cmd: "sleep 0.3; exit 137", yield_time_ms: 250 }))
      .session_id!;
    await table.writeStdin({ session_id: handle, yield_time_ms: 10_000 });
    const completion = completionFor(table.get(handle), false);
    expect(completion).toMatchObject({ status: "completed", exit_code: 137 });
    expect(completion.output).not.toContain("a signal the runner did not send");
  });

  it("a command killed from outside counts only the bytes it wrote in output_bytes_total, as its full output and the runner's answer do", async () => {
    spoolDir = mkdtempSync(join(tmpdir(), "runner-outcomes-"));
    table = new ProcessTable({
      spool: { dir: spoolDir, maxBytes: 64 * 1024 * 1024, partBytes: 1024 * 1024 },
    });
    const written = 300 * 1024;
    const started = await table.execCommand({
      cmd: `head -c ${written} /dev/zero | tr '\\0' a; sleep 0.3; kill -9 0`,
      yield_time_ms: 250,
    });
    const handle = started.session_id!;
    const final = await table.writeStdin({ session_id: handle, yield_time_ms: 10_000 });
    expect(final).toMatchObject({ status: "killed", output_bytes_total: written });
    const completion = completionFor(table.get(handle), false);
    expect(completion.output).toContain("[exec-inbox-runner] killed by SIGKILL");
    expect(completion.output_truncated).toBe(true);
    expect(completion.full_output?.bytes).toBe(written);
    // "output cut, N bytes in total": N is what the command wrote, whichever path the model reads.
    expect(completion.output_bytes_total).toBe(written);
  });

  it("a command that crashes on its own signal (an abort, a segfault) is not said to be the OOM killer's or an outside kill", async () => {
    // Without the sandbox the shell is the leader: a command that aborts (a failed assert()) or
    // segfaults ends it by its own signal, which the runner did not send either.
    const plan = embeddedPlan();
    table = new ProcessTable({
      launch: { ...plan, sandbox: { ...plan.sandbox, mode: "none", user: null, seccomp: null } },
    });
    for (const signal of ["ABRT", "SEGV"]) {
      const started = await table.execCommand({
        cmd: `sleep 0.3; kill -${signal} $$`,
        yield_time_ms: 250,
      });
      const handle = started.session_id!;
      const final = await table.writeStdin({ session_id: handle, yield_time_ms: 10_000 });
      expect(final).toMatchObject({ status: "killed", signal: `SIG${signal}` });
      const completion = completionFor(table.get(handle), false);
      // The model reads this line as the cause: neither the OOM killer (it sends SIGKILL) nor a
      // kill from outside ended this command.
      expect(completion.output).not.toMatch(/the OOM killer|a kill from outside/);
    }
  });

  it("a command that exits 0 after the kill request's SIGTERM reads as exited with code 0 after a kill request", async () => {
    table = new ProcessTable();
    const started = await table.execCommand({
      cmd: "trap 'echo bye; exit 0' TERM; echo up; sleep 100 & wait",
      yield_time_ms: 500,
    });
    table.kill(started.session_id!);
    const final = await table.killed(started.session_id!);
    expect(final).toMatchObject({ ended_by: "kill_request" });
    // The model asked for it to be stopped: its outcome says it was, not only "exited 0".
    expect(outcomeOf(final)).toBe("exited with code 0 after a kill request (kill_request)");
  });
});

// A sandbox provider's own runner for exec-inbox, in a few lines: run the command, heartbeat it with
// the tail of its output, end it when the agent cancels, and post its result. docs/api.md shows it;
// test/e2e/heartbeat-runners.test.ts runs it against `wrangler dev`.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { type JobCallback, startJob } from "../../client";

/** Runs `command` for the job whose reservation answered `callback`; settles once exec-inbox has its result. */
export async function runJob(callback: JobCallback, command: string) {
  const child = spawn("bash", ["-c", command], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (text: string) => (output += text));
  child.stderr.setEncoding("utf8").on("data", (text: string) => (output += text));

  // Heartbeats go every third of callback.heartbeat_timeout_ms until complete() starts.
  const job = startJob(callback, {
    progress: () => ({
      output_tail: output.slice(-4096),
      output_bytes_total: Buffer.byteLength(output),
    }),
    onCancel: () => child.kill("SIGTERM"),
  });

  const [exitCode, signal] = (await once(child, "close")) as [number | null, string | null];
  // 2xx and 409/410 settle it; 413 is resent shorter; 429 and 5xx are retried with backoff.
  return job.complete({
    status: signal === null ? "completed" : "killed",
    exit_code: exitCode,
    output,
    ended_by: job.cancelRequested ? "kill_request" : "process",
  });
}

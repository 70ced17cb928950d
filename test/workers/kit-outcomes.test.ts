// The kits' write_stdin for a finished job the runner no longer knows: answered from the result
// exec-inbox kept, led by its outcome line, so a killed or lost command never reads as an exit,
// an exit a kill request brought about says so, and no byte count is stated that is not known.
// The stand-in runner (FAKE_RUNNER) answers 404 for a handle it never started.
import { env } from "cloudflare:workers";
import { execTools } from "@exec-inbox/ai-sdk/exec-tools";
import { RunnerClient } from "@exec-inbox/ai-sdk/runner-client";
import { describe, expect, it } from "vitest";
import * as api from "../support/api";

async function pulledByTheKit(sid: string, completion: Record<string, unknown>) {
  await api.createSession(sid);
  const { callback } = await api.reserve(sid, "gone-1", "make test");
  expect((await api.complete(sid, "gone-1", callback.token, completion)).status).toBe(202);
  const tools = execTools({
    inbox: api.client(),
    runner: new RunnerClient({
      baseUrl: "http://runner.test",
      token: "test-runner-token",
      fetch: (request) => env.FAKE_RUNNER.fetch(request),
    }),
    sessionId: sid,
    onBackground: () => {},
    onEnded: () => {},
  });
  return (await tools.write_stdin.execute?.(
    { session_id: "gone-1" },
    { toolCallId: "call-1", messages: [], context: {} },
  )) as Record<string, unknown>;
}

describe("the kit's write_stdin from the stored result", () => {
  it("a command killed at its wall time reads as killed, even when the runner sent exit code 0 with it", async () => {
    const sid = api.uniqueId("kit-killed");
    const answer = await pulledByTheKit(sid, {
      status: "killed",
      exit_code: 0,
      output: "partial",
      ended_by: "runner_timeout",
    });
    expect(Object.keys(answer)[0]).toBe("outcome");
    expect(answer).toMatchObject({ outcome: "killed (runner_timeout)", status: "killed" });
    expect(String(answer.outcome)).not.toMatch(/exit/);
    // No exit code beside the killed outcome; the stored job keeps what the runner sent.
    expect(answer.exit_code).toBe(null);
    const job = (await api.call("GET", `/v1/sessions/${sid}/exec-jobs/gone-1`)).body;
    expect(job).toMatchObject({ status: "killed", exit_code: 0 });
  });

  it("a command a kill request ended, sent as completed with exit code 0, says the kill request brought its exit about", async () => {
    const sid = api.uniqueId("kit-kill-request-zero");
    const answer = await pulledByTheKit(sid, {
      status: "completed",
      exit_code: 0,
      output: "bye",
      ended_by: "kill_request",
    });
    expect(answer).toMatchObject({
      outcome: "exited with code 0 after a kill request (kill_request)",
      exit_code: 0,
    });
    const claimed = await api.claim(sid);
    expect(String(claimed.body.claims[0].provider_message.content).split("\n")[0]).toBe(
      `[runtime] Background command session_id="gone-1": exited with code 0 after a kill request (kill_request).`,
    );
  });

  it("a cut output from a runner that sent no output_bytes_total says only that it was cut, in the kit and the runtime message", async () => {
    const sid = api.uniqueId("kit-cut-no-total");
    const answer = await pulledByTheKit(sid, {
      status: "completed",
      exit_code: 2,
      output: "head…[999000 bytes omitted]…tail",
      output_truncated: true,
    });
    expect(answer.outcome).toBe("exited with code 2; output cut");
    const claimed = await api.claim(sid);
    expect(String(claimed.body.claims[0].provider_message.content).split("\n")[0]).toBe(
      `[runtime] Background command session_id="gone-1": exited with code 2; output cut.`,
    );
    // The job keeps the cut output's size, marked as not the command's total.
    const job = (await api.call("GET", `/v1/sessions/${sid}/exec-jobs/gone-1`)).body;
    expect(job).toMatchObject({ output_truncated: true, output_bytes_total_known: false });
  });

  it("a lost command reads as outcome unknown, with the note that says so", async () => {
    const answer = await pulledByTheKit(api.uniqueId("kit-lost"), {
      status: "lost",
      exit_code: null,
      output: "",
      ended_by: "runner_shutdown",
    });
    expect(answer).toMatchObject({
      outcome: "outcome unknown (runner_shutdown)",
      note: "The runner lost this process: its outcome is unknown, not a result.",
    });
  });

  it("a cut output's outcome gives the bytes it had in total", async () => {
    const sid = api.uniqueId("kit-cut");
    const answer = await pulledByTheKit(sid, {
      status: "completed",
      exit_code: 2,
      output: "head…[999000 bytes omitted]…tail",
      output_truncated: true,
      output_bytes_total: 1_000_000,
    });
    expect(answer.outcome).toBe("exited with code 2; output cut, 1000000 bytes in total");
    expect((await api.call("GET", `/v1/sessions/${sid}/exec-jobs/gone-1`)).body).toMatchObject({
      output_bytes_total: 1_000_000,
      output_bytes_total_known: true,
    });
  });
});

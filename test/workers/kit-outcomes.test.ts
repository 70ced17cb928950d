// The kits' write_stdin for a finished job the runner no longer knows: answered from the result
// exec-inbox kept, led by its outcome line, so a killed or lost command never reads as an exit.
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
    const answer = await pulledByTheKit(api.uniqueId("kit-killed"), {
      status: "killed",
      exit_code: 0,
      output: "partial",
      ended_by: "runner_timeout",
    });
    expect(Object.keys(answer)[0]).toBe("outcome");
    expect(answer).toMatchObject({ outcome: "killed (runner_timeout)", status: "killed" });
    expect(String(answer.outcome)).not.toMatch(/exit/);
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
    const answer = await pulledByTheKit(api.uniqueId("kit-cut"), {
      status: "completed",
      exit_code: 2,
      output: "head…[999000 bytes omitted]…tail",
      output_truncated: true,
      output_bytes_total: 1_000_000,
    });
    expect(answer.outcome).toBe("exited with code 2; output cut, 1000000 bytes in total");
  });
});

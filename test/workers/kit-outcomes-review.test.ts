// Failing tests a review of the outcome line found in the kits: a killed command whose runner sent
// exit code 0 still shows the model `exit_code: 0` beside its outcome, and a stored result that
// says completed with exit code 0 although a kill request or the runner's shutdown ended it reads
// as a plain success, and a cut output from a runner that sent no output_bytes_total reads as
// having the cut text's byte count in total.
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

describe("the kit's write_stdin never shows a killed command as exit code 0 (review)", () => {
  it("a killed command sent with exit code 0 shows no exit_code 0 anywhere in the answer", async () => {
    const answer = await pulledByTheKit(api.uniqueId("kit-killed-zero"), {
      status: "killed",
      exit_code: 0,
      output: "partial",
      ended_by: "runner_timeout",
    });
    expect(answer.outcome).toBe("killed (runner_timeout)");
    expect(answer.exit_code).not.toBe(0);
  });

  it("a command a kill request ended, sent as completed with exit code 0, says the kill request ended it", async () => {
    const answer = await pulledByTheKit(api.uniqueId("kit-kill-request-zero"), {
      status: "completed",
      exit_code: 0,
      output: "bye",
      ended_by: "kill_request",
    });
    expect(String(answer.outcome)).toContain("kill_request");
  });

  it("a cut output from a runner that sent no output_bytes_total gives no byte count it does not know", async () => {
    const sid = api.uniqueId("kit-cut-no-total");
    const output = "head…[999000 bytes omitted]…tail";
    const answer = await pulledByTheKit(sid, {
      status: "completed",
      exit_code: 2,
      output,
      output_truncated: true,
    });
    // The command wrote about a megabyte; the only count known is that of the cut text.
    expect(String(answer.outcome)).not.toContain(
      `${new TextEncoder().encode(output).length} bytes`,
    );
    const claimed = await api.claim(sid);
    const first = String(claimed.body.claims[0].provider_message.content).split("\n")[0];
    expect(first).not.toContain(`${new TextEncoder().encode(output).length} bytes`);
  });
});

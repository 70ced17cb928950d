// The kits' answers from a runner's own reply (not the stored result): exec_command that ends
// within its yield and write_stdin once the command ended lead with the outcome line, whatever the
// runner put beside it, and show no exit code beside a killed outcome. A stand-in runner answers through RunnerClient's fetch.
import { describe, expect, it } from "vitest";
import { execTools } from "../../agent/exec-tools";
import { RunnerClient } from "../../agent/runner-client";

const finished = {
  exit_code: 0,
  status: "killed",
  ended_by: "process",
  signal: "SIGKILL",
  output: "",
};

function toolsAnswering(reply: Record<string, unknown>) {
  const runner = new RunnerClient({
    baseUrl: "http://runner.test",
    token: "t",
    fetch: async () => Response.json(reply),
  });
  return execTools({
    inbox: { getJob: async () => ({ status: "running" }) },
    runner,
    sessionId: "s1",
    onBackground: () => {},
    onEnded: () => {},
  } as never);
}

const call = { toolCallId: "c1", messages: [], context: {} };

describe("the kits' outcome from a runner's own answer", () => {
  it("exec_command that ended within its yield leads with killed, never an exit, and shows no exit code", async () => {
    const answer = (await toolsAnswering(finished).exec_command.execute?.(
      { cmd: "x" },
      call,
    )) as unknown as Record<string, unknown>;
    expect(Object.keys(answer)[0]).toBe("outcome");
    expect(answer.outcome).toBe("killed (process, SIGKILL)");
    expect(answer.exit_code).toBe(null);
  });

  it("write_stdin of an ended command leads with killed, never an exit, and shows no exit code", async () => {
    const answer = (await toolsAnswering({ session_id: "h1", ...finished }).write_stdin.execute?.(
      { session_id: "h1" },
      call,
    )) as unknown as Record<string, unknown>;
    expect(answer.outcome).toBe("killed (process, SIGKILL)");
    expect(answer.exit_code).toBe(null);
  });
});

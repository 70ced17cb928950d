// The kit's answer for a command exec-inbox could not take in the background leads with its
// outcome, as every answer for an ended command does: the model reads first that it was stopped,
// or that how it ends is unknown, never a running command or an exit.
import { execTools } from "@exec-inbox/ai-sdk/exec-tools";
import { describe, expect, it } from "vitest";

/** exec_command of the kit against a runner that backgrounds the command and an inbox that refuses it. */
async function untakenAnswer(killWorks: boolean): Promise<Record<string, unknown>> {
  const kills: string[] = [];
  const tools = execTools({
    inbox: {
      reserveJob: async () => {
        throw new Error("reservation refused");
      },
    } as never,
    runner: {
      execCommand: async () => ({ session_id: "h1", output: "started\n" }),
      kill: async (handle: string) => {
        kills.push(handle);
        if (!killWorks) throw new Error("kill refused");
      },
    } as never,
    sessionId: "s1",
    onBackground: () => {},
    onEnded: () => {},
  });
  const answer = (await tools.exec_command.execute?.(
    { cmd: "make" },
    { toolCallId: "c1", messages: [], context: {} },
  )) as unknown as Record<string, unknown>;
  expect(kills).toEqual(["h1"]);
  return answer;
}

describe("a command exec-inbox could not take in the background", () => {
  it("reads as killed by the kill request first, when the kit stopped it", async () => {
    const answer = await untakenAnswer(true);
    expect(Object.keys(answer)[0]).toBe("outcome");
    expect(answer.outcome).toBe("killed (kill_request)");
    expect(answer.status).toBe("killed");
    expect(answer.note).toContain("The command was stopped");
  });

  it("reads as an unknown outcome first, when it could not be stopped either", async () => {
    const answer = await untakenAnswer(false);
    expect(Object.keys(answer)[0]).toBe("outcome");
    expect(answer.outcome).toBe("outcome unknown (not reported)");
    expect(answer.status).toBe("unwatched");
    expect(answer.note).toContain("its outcome is unknown");
  });
});

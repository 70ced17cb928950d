// Outcomes a model cannot misread, end to end: the AI SDK kit's scripted model on real wrangler dev
// and the real runner. A background command whose process group is SIGKILLed from outside reads as
// killed, never as exit code 0; a 10 MB output's first line gives its byte count.
import { readdirSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AgentStack,
  assistantTexts,
  conversationWhen,
  type HostInstance,
  startAgentStack,
  toolResults,
  userTexts,
} from "./agent-stack";

let stack: AgentStack;
let agent: HostInstance;

beforeAll(async () => {
  stack = await startAgentStack();
  agent = await stack.startHost();
}, 90_000);
afterAll(async () => {
  await stack?.close();
});

/** The process group of the one process whose command line is `command`, found in /proc. */
async function processGroupOf(command: string): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const line = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ").trim();
        if (line !== command) continue;
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

/** The runtime messages (the provider messages) of every prompt the session's model was given. */
const runtimeMessagesOf = (sessionId: string): string[] =>
  (agent.models.get(sessionId)?.doGenerateCalls ?? [])
    .flatMap((call) => userTexts(call.prompt))
    .filter((text) => text.startsWith("[runtime]"));

const EXIT_ZERO = /exit(ed)?( with)? code:? 0\b/;

describe("outcomes a model cannot misread, on the real runner", () => {
  it("a background command SIGKILLed from outside reads as killed with the signal named, never as exit code 0", async () => {
    const sid = "outcome-killed-from-outside";
    await agent.host.kit.createSession(sid);
    const first = await agent.host.kit.sendUserMessage(sid, "run: echo started; sleep 3271.5");
    expect(first).toMatch(/^Started command \S+ in the background; I will read it when it ends/);
    const handle = (await agent.host.kit.conversation(sid))?.running[0];

    process.kill(-(await processGroupOf("sleep 3271.5")), "SIGKILL");

    const record = await conversationWhen(agent, sid, (r) =>
      assistantTexts(r).some((text) => text.includes("killed")),
    );
    await agent.host.kit.settled(sid);
    // The runtime message the woken model read leads with the outcome.
    const [runtime] = runtimeMessagesOf(sid);
    expect(runtime?.split("\n")[0]).toBe(
      `[runtime] Background command session_id="${handle}": killed (process).`,
    );
    expect(runtime).toContain("killed by SIGKILL, a signal the runner did not send");
    // Its write_stdin answer, and what the model then said, name the signal.
    const pulled = toolResults(record).find((result) => result.toolName === "write_stdin");
    expect(pulled?.value).toMatchObject({
      outcome: "killed (process, SIGKILL)",
      status: "killed",
      exit_code: null,
    });
    expect(assistantTexts(record).at(-1)).toMatch(
      new RegExp(`^Command ${handle} killed \\(process, SIGKILL\\)`),
    );
    for (const text of [...runtimeMessagesOf(sid), ...assistantTexts(record)]) {
      expect(text).not.toMatch(EXIT_ZERO);
    }
    expect(await stack.inbox.getJob(sid, handle!)).toMatchObject({
      status: "killed",
      exit_code: null,
      ended_by: "process",
    });
  });

  it("a 10 MB output is cut, and the first line the model reads gives its byte count", async () => {
    const sid = "outcome-ten-megabytes";
    const bytes = 10 * 1024 * 1024;
    await agent.host.kit.createSession(sid);
    await agent.host.kit.sendUserMessage(sid, `run: sleep 1; yes a | head -c ${bytes}`);
    const handle = (await agent.host.kit.conversation(sid))?.running[0];
    const record = await conversationWhen(
      agent,
      sid,
      (r) => assistantTexts(r).some((text) => text.includes("exited with code 0")),
      60_000,
    );
    await agent.host.kit.settled(sid);
    const [runtime] = runtimeMessagesOf(sid);
    expect(runtime?.split("\n")[0]).toBe(
      `[runtime] Background command session_id="${handle}": exited with code 0; output cut, ${bytes} bytes in total.`,
    );
    const pulled = toolResults(record).find((result) => result.toolName === "write_stdin");
    expect(String(pulled?.value.outcome)).toBe(
      `exited with code 0; output cut, ${bytes} bytes in total`,
    );
    expect(await stack.inbox.getJob(sid, handle!)).toMatchObject({
      status: "completed",
      output_truncated: true,
      output_bytes_total: bytes,
    });
  });
});

// A host process that stores turns and then dies by SIGKILL: the conversation store's crash tests
// run it as a real child process. Not a test itself; the store's tests spawn it.
//   <stateDir> kill-after-store <turns>   stores `turns` turns one at a time, SIGKILLs itself
//                                          right after the last store call returns
//   <stateDir> store-forever <bytes>       stores ever larger turns (`bytes` of text each) until
//                                          the parent kills it, printing `stored <turns>` after each
import type { ModelMessage } from "ai";
import { type SessionRecord, SqliteConversationStore } from "../../agent/conversation-store";

export const CHILD_SESSION = "crash:session-1";

/** A conversation of `turns` turns (a user message and an answer of `answerBytes` each). */
export function conversation(
  sessionId: string,
  turns: number,
  answerBytes = 64,
): SessionRecord<ModelMessage> {
  const messages: ModelMessage[] = [];
  for (let turn = 1; turn <= turns; turn++) {
    messages.push({ role: "user", content: `turn ${turn}` });
    messages.push({ role: "assistant", content: `answer ${turn} ${"x".repeat(answerBytes)}` });
  }
  return {
    sessionId,
    lifetime: "lifetime-1",
    messages,
    running: turns % 2 === 0 ? [] : [`job-${turns}`],
    applied: Array.from({ length: turns }, (_, i) => `env-${i + 1}`),
    resumes: [],
    pendingResume: null,
    activeRun: {
      runId: `run-${turns}`,
      resumeId: null,
      leaseExpiresAt: turns,
      pendingUserText: null,
    },
  };
}

async function main(): Promise<void> {
  const [stateDir, mode, count] = process.argv.slice(2);
  if (stateDir === undefined || count === undefined) throw new Error("usage: <dir> <mode> <n>");
  const store = new SqliteConversationStore(stateDir);
  if (mode === "kill-after-store") {
    for (let turn = 1; turn <= Number(count); turn++) {
      await store.save(conversation(CHILD_SESSION, turn));
    }
    // Nothing after the store call: no close, no exit handler, no flush of anything.
    process.kill(process.pid, "SIGKILL");
  } else if (mode === "store-forever") {
    for (let turn = 1; ; turn++) {
      await store.save(conversation(CHILD_SESSION, turn, Number(count)));
      process.stdout.write(`stored ${turn}\n`);
    }
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
}

if (process.argv[1]?.endsWith("conversation-store-child.ts")) await main();

// Arrange steps the e2e tests share: a server that lives as long as a describe block, and a session
// whose first agent cycle has run. What the tests then send and assert is theirs.
import { afterAll, beforeAll } from "vitest";
import { assistantTexts, conversationWhen, type HostInstance } from "../e2e/agent-stack";

/** Starts a server before the block's tests and closes it after them; call the result to reach it. */
export function useServer<Server extends { close(): Promise<void> }>(
  start: () => Promise<Server>,
): () => Server {
  let server: Server | undefined;
  beforeAll(async () => {
    server = await start();
  });
  afterAll(async () => {
    await server?.close();
  });
  return () => {
    if (server === undefined) throw new Error("the server runs only while the block's tests do");
    return server;
  };
}

/** A session whose first cycle ran `printf marker` in the background and was resumed with its output. */
export async function afterFirstCycle(agent: HostInstance, sid: string, marker: string) {
  await agent.host.kit.createSession(sid);
  await agent.host.kit.sendUserMessage(sid, `run: sleep 1; printf ${marker}`);
  await conversationWhen(agent, sid, (r) =>
    assistantTexts(r).some((text) => text.includes(marker)),
  );
  await agent.host.kit.settled(sid);
}

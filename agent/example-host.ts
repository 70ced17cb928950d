// The example agent host: one agent per session behind a small HTTP API (an AI SDK agent, or another
// framework's through its turn engine), its conversations in one SQLite database. `npm run agent`
// starts it (scripts/agent-host.ts); tests and the demo start it here.

import { ExecInboxClient } from "@exec-inbox/client";
import { serve } from "@hono/node-server";
import type { ModelMessage } from "ai";
import { Hono } from "hono";
import { AgentKit, type AgentKitOptions } from "./agent-kit";
import { readBoundedJson } from "./bounded-body";
import { CONVERSATION_DATABASE, SqliteConversationStore } from "./conversation-store";
import { RunnerClient } from "./runner-client";

/** `Omit` over each member of a union (the kit's options are one: a `model` or a `turn`). */
type OmitEach<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** The kit's options but what the host makes itself, and where the host runs. */
export type ExampleHostOptions<M = ModelMessage> = OmitEach<
  AgentKitOptions<M>,
  "inbox" | "runner" | "store" | "resumeUrl"
> &
  HostSettings;

interface HostSettings {
  readonly execInboxUrl: string;
  readonly agentToken: string;
  readonly runnerUrl: string;
  readonly runnerToken: string;
  readonly stateDir: string;
  readonly port: number;
  readonly hostname?: string;
}

export interface ExampleHost<M = ModelMessage> {
  readonly url: string;
  readonly kit: AgentKit<M>;
  close(): Promise<void>;
}

/** exec-inbox takes messages up to 1 MiB; the host's own bodies are capped the same. */
const MAX_HOST_BODY_BYTES = 1024 * 1024;

/** A string field of a small JSON body, read capped and streamed, or the answer refusing it. */
async function stringField(
  request: Request,
  field: string,
): Promise<{ ok: true; value: string } | { ok: false; response: Response }> {
  const read = await readBoundedJson(request, MAX_HOST_BODY_BYTES);
  if (!read.ok)
    return { ok: false, response: Response.json({ error: read.error }, { status: read.status }) };
  const value =
    typeof read.value === "object" && read.value !== null
      ? (read.value as Record<string, unknown>)[field]
      : undefined;
  return typeof value === "string"
    ? { ok: true, value }
    : {
        ok: false,
        response: Response.json({ error: `${field} must be a string` }, { status: 422 }),
      };
}

/** The host's routes over any kit: an AI SDK one, or one with another framework's turn engine. */
export function exampleHostApp<M>(kit: AgentKit<M>): Hono {
  const app = new Hono();
  app.get("/healthz", (c) => c.json({ ok: true }));
  // The kit caps and checks the resume body itself, before its signature.
  app.post("/resume", (c) => kit.handleResume(c.req.raw));
  app.post("/sessions", async (c) => {
    const id = await stringField(c.req.raw, "id");
    if (!id.ok) return id.response;
    await kit.createSession(id.value);
    return c.json({ id: id.value }, 201);
  });
  app.delete("/sessions/:id", async (c) => {
    await kit.deleteSession(c.req.param("id"));
    return c.body(null, 204);
  });
  app.get("/sessions/:id", async (c) => {
    const record = await kit.conversation(c.req.param("id"));
    return record === undefined ? c.json({ error: "no such session" }, 404) : c.json(record);
  });
  app.post("/sessions/:id/messages", async (c) => {
    const content = await stringField(c.req.raw, "content");
    if (!content.ok) return content.response;
    return c.json({ answer: await kit.sendUserMessage(c.req.param("id"), content.value) });
  });
  app.onError((error, c) => c.json({ error: error.message }, 500));
  return app;
}

export async function startExampleHost<M = ModelMessage>(
  options: ExampleHostOptions<M>,
): Promise<ExampleHost<M>> {
  // The routes have no auth (only /resume is signed): loopback unless the caller says otherwise.
  const hostname = options.hostname ?? "127.0.0.1";
  const url = `http://${hostname}:${options.port}`;
  // Opened first: a damaged database stops the start here, before the host listens.
  const store = new SqliteConversationStore<M>(options.stateDir);
  if (store.imported > 0) {
    options.log?.(
      `imported ${store.imported} conversations from the JSON files of an earlier host into ${CONVERSATION_DATABASE}; the .json files are no longer read`,
    );
  }
  let kit: AgentKit<M>;
  let server: ReturnType<typeof serve>;
  try {
    // The spread keeps the caller's `model` or `turn`; TypeScript cannot follow a union through it.
    kit = new AgentKit<M>({
      ...options,
      inbox: new ExecInboxClient({ baseUrl: options.execInboxUrl, token: options.agentToken }),
      runner: new RunnerClient({ baseUrl: options.runnerUrl, token: options.runnerToken }),
      store,
      resumeUrl: `${url}/resume`,
    } as AgentKitOptions<M>);
    const app = exampleHostApp(kit);
    server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
      const started = serve({ fetch: app.fetch, port: options.port, hostname }, () =>
        resolve(started),
      );
      // A port in use fails the start instead of leaving a host that never listens.
      started.once("error", reject);
    });
  } catch (error) {
    store.close();
    throw error;
  }
  // Runs and resumes a crashed host left unfinished continue now.
  void kit.recover().catch((error: unknown) => options.log?.(`recovery failed: ${String(error)}`));
  return {
    url,
    kit,
    close: async () => {
      kit.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      store.close();
    },
  };
}

// An example agent Worker on the kit: `ShellAgent` (one agent per exec-inbox session), the
// `ExecInboxWake` entrypoint exec-inbox's binding calls, and a small HTTP front to talk to an agent
// (`POST /agents/<sid>/prompt {"text"}`, `GET /agents/<sid>/transcript`, `POST
// /agents/<sid>/recover` for `recoverToolCalls`). Its model is the scripted
// one (no API key): a line `run: <command>` runs it; a runtime message makes it read the result;
// a message ending in `fail: model` makes the model fail; `crash: after exec` resets the object
// once its commands started, before the turn is stored.

import {
  ExecInboxAgent,
  type ExecInboxSettings,
  execInboxWake,
  RunnerClient,
} from "@exec-inbox/agents-sdk";
import { scriptedModel } from "@exec-inbox/ai-sdk/scripted-model";
import { ExecInboxClient } from "@exec-inbox/client";
import { getAgentByName } from "agents";

interface Env {
  readonly SHELL_AGENT: DurableObjectNamespace<ShellAgent>;
  /** exec-inbox, bound by a service binding: no public URL, no signature. */
  readonly EXEC_INBOX: Fetcher;
  readonly EXEC_INBOX_TOKEN: string;
  readonly RUNNER_URL: string;
  readonly RUNNER_TOKEN: string;
}

export class ShellAgent extends ExecInboxAgent<Env> {
  /** Every prompt the model was given in this instance (for tests and the demo's log). */
  private readonly prompts: unknown[] = [];
  /** Claims still to fail with a 503 (`POST /agents/<sid>/outage {"claims": n}`): an outage drill. */
  private failingClaims = 0;

  protected execInbox(): ExecInboxSettings {
    return {
      // Loopback host name: exec-inbox serves its local development secrets to loopback only.
      inbox: new ExecInboxClient({
        baseUrl: "http://127.0.0.1",
        token: this.env.EXEC_INBOX_TOKEN,
        fetch: (request) => {
          if (this.failingClaims > 0 && new URL(request.url).pathname.endsWith("/inbox/claim")) {
            this.failingClaims -= 1;
            const problem = {
              title: "outage drill",
              status: 503,
              code: "unavailable",
              detail: "outage drill",
            };
            return Promise.resolve(Response.json(problem, { status: 503 }));
          }
          return this.env.EXEC_INBOX.fetch(request);
        },
      }),
      runner: new RunnerClient({ baseUrl: this.env.RUNNER_URL, token: this.env.RUNNER_TOKEN }),
      // A human message that says `fail: model` plays a provider that keeps failing.
      model: scriptedModel((prompt) => {
        this.prompts.push(prompt);
        const last = prompt.at(-1);
        if (last?.role === "user" && JSON.stringify(last.content).includes("fail: model")) {
          throw new Error("the model provider is unavailable (fail: model)");
        }
        // `crash: after exec` plays a host that dies once its tool calls ran, before the turn is
        // stored: the object is reset when the model is about to read their results. Once a
        // result recovered after the reset (it says the command was not started again) is in the
        // conversation, the drill is over.
        const conversation = JSON.stringify(prompt);
        const asked = conversation.includes("crash: after exec");
        const recovered = conversation.includes("not started again");
        if (asked && !recovered && last?.role === "tool") {
          this.ctx.abort("crash drill: reset after the tool calls, before the turn is stored");
        }
      }),
    };
  }

  outage(claims: number): void {
    this.failingClaims = claims;
  }

  /** A compaction drill: the tool results go, the calls stay (`POST /agents/<sid>/compact`). */
  dropToolResults(): void {
    const kept = this.conversation.messages().filter((message) => message.role !== "tool");
    this.conversation.commit({ state: this.conversation.state(), messages: kept, replace: true });
  }

  modelPrompts(): string {
    return JSON.stringify(this.prompts);
  }
}

export class ExecInboxWake extends execInboxWake<Env, ShellAgent>((env) => env.SHELL_AGENT) {}

const AGENT_PATH =
  /^\/agents\/([A-Za-z0-9._:-]{1,128})\/(prompt|transcript|prompts|outage|compact|recover)$/;

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/healthz") return Response.json({ ok: true });
    const match = AGENT_PATH.exec(url.pathname);
    if (match === null) return new Response("not found", { status: 404 });
    const [, sessionId = "", action] = match;
    const agent = await getAgentByName(env.SHELL_AGENT, sessionId);
    if (action === "prompt" && request.method === "POST") {
      const { text } = (await request.json()) as { text: string };
      try {
        return Response.json({ answer: await agent.prompt(text) });
      } catch (error) {
        // The model failed on every attempt (the run was ended), or exec-inbox refused the run.
        return Response.json({ error: String(error) }, { status: 502 });
      }
    }
    if (action === "outage" && request.method === "POST") {
      const { claims } = (await request.json()) as { claims: number };
      await agent.outage(claims);
      return Response.json({ ok: true });
    }
    if (action === "compact" && request.method === "POST") {
      await agent.dropToolResults();
      return Response.json({ ok: true });
    }
    if (action === "recover" && request.method === "POST") {
      return Response.json({ recovered: await agent.recoverToolCalls() });
    }
    if (action === "transcript") {
      return Response.json({ messages: JSON.parse(await agent.transcript()) });
    }
    if (action === "prompts")
      return Response.json({ prompts: JSON.parse(await agent.modelPrompts()) });
    return new Response("method not allowed", { status: 405 });
  },
} satisfies ExportedHandler<Env>;

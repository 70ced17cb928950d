// Honest wakes: the session view's `wake.via`, a reservation's `will_wake`, and what each kit's
// exec_command tells the model when a command goes to the background, for a session woken by its
// resume_url, by its binding, by its tenant's default webhook, and by nothing. The kits run their
// real tools against the Worker under test and the stand-in runner (FAKE_RUNNER).
import { env } from "cloudflare:workers";
import { execTools } from "@exec-inbox/ai-sdk/exec-tools";
import { RunnerClient } from "@exec-inbox/ai-sdk/runner-client";
import { RunContext } from "@openai/agents";
import { describe, expect, it } from "vitest";
import { execFunctionTools } from "../../openai-agents/function-tools";
import * as api from "../support/api";
import { AGENT_TOKEN, GLOBEX_AGENT_TOKEN } from "../support/secrets";

const PROMISE = "You will get a runtime message when it ends";
const NO_WAKE = "Nothing will wake you when it ends";

interface Case {
  readonly name: string;
  readonly token: string;
  readonly body: (sid: string) => Record<string, unknown>;
  readonly via: "webhook" | "binding" | null;
}

const CASES: readonly Case[] = [
  {
    name: "its own resume_url",
    token: AGENT_TOKEN,
    body: (sid) => ({ resume_url: api.hookUrl(sid) }),
    via: "webhook",
  },
  {
    name: "its resume binding",
    token: AGENT_TOKEN,
    body: () => ({ resume_binding: "WAKE_AGENT" }),
    via: "binding",
  },
  // globex has its own default webhook (vitest.config.ts TENANT_SETTINGS).
  {
    name: "its tenant's default webhook",
    token: GLOBEX_AGENT_TOKEN,
    body: () => ({}),
    via: "webhook",
  },
  // The pool's RESUME_WEBHOOK_URL is empty: the default tenant has no default.
  { name: "no wake path", token: AGENT_TOKEN, body: () => ({}), via: null },
];

async function sessionFor(c: Case, prefix: string): Promise<string> {
  const sid = api.uniqueId(prefix);
  const created = await api.call("POST", "/v1/sessions", {
    token: c.token,
    body: { id: sid, ...c.body(sid) },
  });
  expect(created.status).toBe(201);
  return sid;
}

const toolContext = (c: Case, sid: string) => ({
  inbox: api.client(c.token),
  runner: new RunnerClient({
    baseUrl: "http://runner.test",
    token: "test-runner-token",
    fetch: (request) => env.FAKE_RUNNER.fetch(request),
  }),
  sessionId: sid,
  onBackground: () => {},
  onEnded: () => {},
});

/** The note must promise a wake exactly when there is a path, and say otherwise plainly. */
function expectHonestNote(note: unknown, c: Case, handle: string) {
  expect(typeof note).toBe("string");
  if (c.via === null) {
    expect(note).toContain(NO_WAKE);
    expect(note).toContain(`write_stdin (session_id="${handle}")`);
    expect(note).not.toContain(PROMISE);
  } else {
    expect(note).toContain(PROMISE);
    expect(note).not.toContain(NO_WAKE);
  }
}

describe("honest wakes", () => {
  for (const c of CASES) {
    it(`a session with ${c.name} shows wake.via ${String(c.via)} and its reservation says will_wake ${c.via !== null}`, async () => {
      const sid = await sessionFor(c, "wake-view");
      const view = await api.call("GET", `/v1/sessions/${sid}`, { token: c.token });
      expect(view.body.wake).toEqual({ via: c.via });
      const reserved = await api.call("POST", `/v1/sessions/${sid}/exec-jobs`, {
        token: c.token,
        body: { handle: "h1", command: "make test" },
      });
      expect(reserved.status).toBe(201);
      expect(reserved.body.will_wake).toBe(c.via !== null);
      // The same reservation again answers the same.
      const again = await api.call("POST", `/v1/sessions/${sid}/exec-jobs`, {
        token: c.token,
        body: { handle: "h1", command: "make test" },
      });
      expect([again.status, again.body.will_wake]).toEqual([200, c.via !== null]);
    });

    it(`the AI SDK kit's exec_command promises a wake to a session with ${c.name} only if one will come`, async () => {
      const sid = await sessionFor(c, "wake-ai-sdk");
      const tools = execTools(toolContext(c, sid));
      const answer = (await tools.exec_command.execute?.(
        { cmd: "sleep 60" },
        { toolCallId: "call-1", messages: [], context: {} },
      )) as { session_id: string; note: string };
      expect(answer.session_id).toEqual(expect.any(String));
      expectHonestNote(answer.note, c, answer.session_id);
      expect((await api.client(c.token).getJob(sid, answer.session_id)).status).toBe("running");
    });

    it(`the OpenAI Agents kit's exec_command promises a wake to a session with ${c.name} only if one will come`, async () => {
      const sid = await sessionFor(c, "wake-openai");
      const exec = execFunctionTools(toolContext(c, sid)).find((t) => t.name === "exec_command");
      const answer = (await exec?.invoke(
        new RunContext(),
        JSON.stringify({ cmd: "sleep 60" }),
      )) as {
        session_id: string;
        note: string;
      };
      expect(answer.session_id).toEqual(expect.any(String));
      expectHonestNote(answer.note, c, answer.session_id);
    });
  }
});

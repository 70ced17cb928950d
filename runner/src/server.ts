// The runner's HTTP API: bearer auth, validated tool calls, callback arming, problem+json errors.
import { Hono } from "hono";
import { z } from "zod";
import { bearerToken } from "../../shared/bearer-token";
import { jsonBody } from "../../shared/body";
import { heartbeatTimeoutMs } from "../../shared/exec-wire";
import { problem } from "../../shared/problem";
import { ShuttingDown, TooManyProcesses, UnknownProcess } from "./process-table";
import type { Runner } from "./runner";
import { isListedToken } from "./runner-token";
import { isWorkspaceName, OutsideWorkspace } from "./workspaces";

const tokens = z.int().min(1).max(1_000_000);

const execCommandBody = z.strictObject({
  cmd: z
    .string()
    .min(1)
    .max(64 * 1024),
  /** The agent session the command belongs to: its files live in that session's workspace. */
  workspace: z
    .string()
    .refine(isWorkspaceName, "a session id: 1–128 of [A-Za-z0-9._:-], not . or ..")
    .optional(),
  workdir: z.string().min(1).optional(),
  yield_time_ms: z.int().min(0).max(3_600_000).optional(),
  max_output_tokens: tokens.optional(),
});

const writeStdinBody = z.strictObject({
  session_id: z.string().min(1).max(128),
  chars: z
    .string()
    .max(1024 * 1024)
    .optional(),
  yield_time_ms: z.int().min(0).max(3_600_000).optional(),
  max_output_tokens: tokens.optional(),
});

const callbackUrl = z.url({ protocol: /^https?$/ });

// The reservation's `callback`, passed whole: the liveness fields are optional for older callers.
const armCallbackBody = z.strictObject({
  url: callbackUrl,
  token: z.string().min(1).max(4096),
  heartbeat_url: callbackUrl.nullable().optional(),
  heartbeat_timeout_ms: heartbeatTimeoutMs.nullable().optional(),
});

const killBody = z.strictObject({ max_output_tokens: tokens.optional() });

/** The runner's own codes, outside exec-inbox's closed set. */
function runnerProblem(status: number, code: string, title: string, detail: string): Response {
  const body = { type: `https://exec-inbox.dev/problems/${code}`, title, status, detail, code };
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/problem+json" },
  });
}

function toolError(error: unknown): Response {
  if (error instanceof UnknownProcess) {
    return problem(
      "not_found",
      `${error.message} (an exited process is forgotten after its retention window, and a runner restart forgets every process)`,
    );
  }
  if (error instanceof TooManyProcesses) {
    return runnerProblem(429, "too_many_processes", "Too many processes", error.message);
  }
  if (error instanceof OutsideWorkspace) return problem("invalid_request", error.message);
  if (error instanceof ShuttingDown) {
    return runnerProblem(503, "shutting_down", "Shutting down", error.message);
  }
  throw error;
}

export function runnerApp(runner: Runner, runnerTokens: readonly string[]): Hono {
  const app = new Hono();
  app.get("/healthz", (c) =>
    c.json({
      ok: true,
      live_processes: runner.table.liveCount,
      held_processes: runner.table.all().length,
    }),
  );
  app.use("/v1/*", async (c, next) => {
    if (!isListedToken(bearerToken(c.req.header("authorization")), runnerTokens)) {
      return problem("unauthorized", "missing or invalid runner token");
    }
    return next();
  });

  app.post("/v1/exec_command", async (c) => {
    const body = await jsonBody(c, execCommandBody);
    if (!body.ok) return body.response;
    try {
      return c.json(await runner.table.execCommand(body.value));
    } catch (error) {
      return toolError(error);
    }
  });

  app.post("/v1/write_stdin", async (c) => {
    const body = await jsonBody(c, writeStdinBody);
    if (!body.ok) return body.response;
    try {
      return c.json(await runner.table.writeStdin(body.value));
    } catch (error) {
      return toolError(error);
    }
  });

  app.post("/v1/processes/:sessionId/callback", async (c) => {
    const body = await jsonBody(c, armCallbackBody);
    if (!body.ok) return body.response;
    try {
      const { url, token, ...liveness } = body.value;
      runner.arm(c.req.param("sessionId"), url, token, liveness);
      return c.json({ armed: true }, 202);
    } catch (error) {
      return toolError(error);
    }
  });

  // Ends the process's whole group; its completion then says ended_by "kill_request".
  app.post("/v1/processes/:sessionId/kill", async (c) => {
    const body = await jsonBody(c, killBody, { optional: true });
    if (!body.ok) return body.response;
    const sessionId = c.req.param("sessionId");
    try {
      const killed = runner.table.kill(sessionId);
      const answer = await runner.table.killed(sessionId, body.value.max_output_tokens);
      return c.json({ ...answer, killed });
    } catch (error) {
      return toolError(error);
    }
  });

  app.notFound(() => problem("not_found", "no such route"));
  app.onError((error) => {
    console.error(`[runner] unhandled error: ${error.name}`);
    return problem("internal", "internal error");
  });
  return app;
}

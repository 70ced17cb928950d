// Handlers for sessions and human messages (table: routes/sessions.ts): call the session object,
// map the result.
import type { OpenAPIHono } from "@hono/zod-openapi";
import { problem } from "../../shared/problem";
import { type Config, resumeTargetsFor, runnerUrlAllowlistFor } from "../domain/config";
import { MAX_MESSAGE_BYTES, MAX_SESSION_METADATA_BYTES } from "../domain/limits";
import { checkResumeBinding } from "../domain/resume-binding";
import { checkResumeUrl, checkRunnerUrl } from "../domain/resume-url";
import { utf8Bytes } from "../domain/text";
import { hasWake } from "../session-object/resume-binding";
import { type AppEnv, sessionStub } from "./context";
import * as routes from "./routes/sessions";
import { answer, serve } from "./serve";
import { mayExist } from "./tenant-quotas";

export function sessionRoutes(app: OpenAPIHono<AppEnv>): void {
  serve(app, routes.createSession, async (c) => {
    const body = c.req.valid("json");
    const metadataBytes = utf8Bytes(JSON.stringify(body.metadata ?? {}));
    if (metadataBytes > MAX_SESSION_METADATA_BYTES) {
      return problem(
        "payload_too_large",
        `metadata is ${metadataBytes} bytes of JSON; the limit is ${MAX_SESSION_METADATA_BYTES}`,
      );
    }
    const targets = resumeTargetsFor(c.var.config, c.var.tenant);
    let resumeUrl: string | null = null;
    if (body.resume_url !== undefined) {
      const checked = checkResumeUrl(body.resume_url, targets.resumeUrlAllowlist);
      if (!checked.ok) return problem("invalid_request", checked.reason);
      resumeUrl = checked.url;
    }
    let resumeBinding: string | null = null;
    if (body.resume_binding !== undefined) {
      if (resumeUrl !== null) {
        return problem("invalid_request", "name resume_url or resume_binding, not both");
      }
      const checked = checkResumeBinding(body.resume_binding, targets.resumeBindingAllowlist);
      if (!checked.ok) return problem("invalid_request", checked.reason);
      // Listed but not bound: every wake would fail, so the deployment's mistake is said now.
      if (!hasWake(c.env, checked.binding)) {
        return problem(
          "invalid_request",
          `resume_binding ${checked.binding} is allowed but this deployment binds no service with wake() by that name`,
        );
      }
      resumeBinding = checked.binding;
    }
    const runner = body.runner === undefined ? null : checkedRunner(body.runner, c.var);
    if (runner !== null && !runner.ok) return problem("invalid_request", runner.reason);
    // The object takes the session's place in the tenant's quota in step with its storage.
    const result = await sessionStub(c, body.id).create({
      tenant: c.var.tenant,
      id: body.id,
      resumeUrl,
      resumeBinding,
      metadata: body.metadata ?? {},
      runner: runner?.runner ?? null,
    });
    return answer(routes.createSession, 201, result);
  });

  serve(app, routes.setRunner, async (c) => {
    const { sid } = c.req.valid("param");
    const body = c.req.valid("json");
    const runner = body === null ? null : checkedRunner(body, c.var);
    if (runner !== null && !runner.ok) return problem("invalid_request", runner.reason);
    const result = await sessionStub(c, sid).setRunner({ runner: runner?.runner ?? null });
    return answer(routes.setRunner, 200, result);
  });

  serve(app, routes.getSession, async (c) => {
    const { sid } = c.req.valid("param");
    return answer(routes.getSession, 200, await sessionStub(c, sid).view());
  });

  serve(app, routes.getSessionStats, async (c) => {
    const { sid } = c.req.valid("param");
    return answer(routes.getSessionStats, 200, await sessionStub(c, sid).stats());
  });

  serve(app, routes.deleteSession, async (c) => {
    const { sid } = c.req.valid("param");
    if (!(await mayExist(c, sid))) return problem("not_found", "no such session");
    // The object gives the place back, only when a session was there to delete.
    const result = await sessionStub(c, sid).remove();
    return result.ok ? new Response(null, { status: 204 }) : problem(result.code, result.detail);
  });

  serve(app, routes.appendMessage, async (c) => {
    const { sid } = c.req.valid("param");
    const { role, content, metadata } = c.req.valid("json");
    const messageBytes = utf8Bytes(JSON.stringify({ role, content, metadata: metadata ?? {} }));
    if (messageBytes > MAX_MESSAGE_BYTES) {
      return problem(
        "payload_too_large",
        `the message is ${messageBytes} bytes of JSON; the limit is ${MAX_MESSAGE_BYTES}`,
      );
    }
    const result = await sessionStub(c, sid).appendMessage({
      role,
      content,
      metadata: metadata ?? {},
    });
    return answer(routes.appendMessage, 201, result);
  });

  serve(app, routes.listMessages, async (c) => {
    const { sid } = c.req.valid("param");
    const query = c.req.valid("query");
    const result = await sessionStub(c, sid).listMessages({
      after: query.after ?? -1,
      before: query.before ?? null,
      limit: query.limit,
    });
    return answer(routes.listMessages, 200, result);
  });
}

/** The runner as stored: its URL in the parsed form the allowlist admitted. */
function checkedRunner(
  body: { url: string; token: string },
  vars: { config: Config; tenant: string },
): { ok: true; runner: { url: string; token: string } } | { ok: false; reason: string } {
  const checked = checkRunnerUrl(body.url, runnerUrlAllowlistFor(vars.config, vars.tenant));
  return checked.ok ? { ok: true, runner: { url: checked.url, token: body.token } } : checked;
}

// Routes for sessions and human messages: validate, call the session object, map the result.
import type { Hono } from "hono";
import { resumeTargetsFor } from "../domain/config";
import { MAX_MESSAGE_BYTES, MAX_SESSION_METADATA_BYTES } from "../domain/limits";
import { checkResumeUrl } from "../domain/resume-url";
import { appendMessageBody, createSessionBody, messagesQuery } from "../domain/schemas";
import { utf8Bytes } from "../domain/text";
import { jsonBody, validate } from "./body";
import { type AppEnv, pathIds, reply, sessionStub } from "./context";
import { problem } from "./problem";

export function sessionRoutes(app: Hono<AppEnv>): void {
  app.post("/v1/sessions", async (c) => {
    const body = await jsonBody(c, createSessionBody);
    if (!body.ok) return body.response;
    const metadataBytes = utf8Bytes(JSON.stringify(body.value.metadata ?? {}));
    if (metadataBytes > MAX_SESSION_METADATA_BYTES) {
      return problem(
        "payload_too_large",
        `metadata is ${metadataBytes} bytes of JSON; the limit is ${MAX_SESSION_METADATA_BYTES}`,
      );
    }
    let resumeUrl: string | null = null;
    if (body.value.resume_url !== undefined) {
      const { resumeUrlAllowlist } = resumeTargetsFor(c.var.config, c.var.tenant);
      const checked = checkResumeUrl(body.value.resume_url, resumeUrlAllowlist);
      if (!checked.ok) return problem("invalid_request", checked.reason);
      resumeUrl = checked.url;
    }
    const result = await sessionStub(c, body.value.id).create({
      tenant: c.var.tenant,
      id: body.value.id,
      resumeUrl,
      metadata: body.value.metadata ?? {},
    });
    return reply(result, 201);
  });

  app.get("/v1/sessions/:sid", async (c) => {
    const ids = pathIds(c, "sid");
    if (ids instanceof Response) return ids;
    return reply(await sessionStub(c, ids.sid).view());
  });

  app.get("/v1/sessions/:sid/stats", async (c) => {
    const ids = pathIds(c, "sid");
    if (ids instanceof Response) return ids;
    return reply(await sessionStub(c, ids.sid).stats());
  });

  app.delete("/v1/sessions/:sid", async (c) => {
    const ids = pathIds(c, "sid");
    if (ids instanceof Response) return ids;
    const result = await sessionStub(c, ids.sid).remove();
    return result.ok ? new Response(null, { status: 204 }) : reply(result);
  });

  app.post("/v1/sessions/:sid/messages", async (c) => {
    const ids = pathIds(c, "sid");
    if (ids instanceof Response) return ids;
    const body = await jsonBody(c, appendMessageBody);
    if (!body.ok) return body.response;
    const { role, content, metadata } = body.value;
    const messageBytes = utf8Bytes(JSON.stringify({ role, content, metadata: metadata ?? {} }));
    if (messageBytes > MAX_MESSAGE_BYTES) {
      return problem(
        "payload_too_large",
        `the message is ${messageBytes} bytes of JSON; the limit is ${MAX_MESSAGE_BYTES}`,
      );
    }
    return reply(
      await sessionStub(c, ids.sid).appendMessage({ role, content, metadata: metadata ?? {} }),
      201,
    );
  });

  app.get("/v1/sessions/:sid/messages", async (c) => {
    const ids = pathIds(c, "sid");
    if (ids instanceof Response) return ids;
    const query = validate(messagesQuery, c.req.query());
    if (!query.ok) return query.response;
    return reply(
      await sessionStub(c, ids.sid).listMessages({
        after: query.value.after ?? -1,
        before: query.value.before ?? null,
        limit: query.value.limit,
      }),
    );
  });
}

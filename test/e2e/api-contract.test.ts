import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ExecInboxClient } from "@exec-inbox/client";
import { compileErrors, validate } from "@readme/openapi-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AGENT_TOKEN,
  devVar,
  startAgentHost,
  startWranglerDev,
  viewWhen,
  type WranglerDev,
} from "../support/local-stack";
import { ConformanceChecker } from "../support/openapi-conformance";

const OPERATOR = devVar("OPERATOR_TOKENS").split(",")[0];

describe("the published OpenAPI document, against the real wrangler dev", () => {
  const stateDir = mkdtempSync(join(tmpdir(), "exec-inbox-contract-"));
  let dev: WranglerDev;
  let okHost: Awaited<ReturnType<typeof startAgentHost>>;
  let refusingHost: Awaited<ReturnType<typeof startAgentHost>>;
  let document: any;

  beforeAll(async () => {
    okHost = await startAgentHost();
    refusingHost = await startAgentHost(() => 500);
    // One delivery per resume: a refused one fails at once, so the redeliver action has work.
    dev = await startWranglerDev(stateDir, "any", {
      RESUME_URL_ALLOWLIST: "http://127.0.0.1:*",
      RESUME_MAX_ATTEMPTS: "1",
    });
    document = await (await fetch(`${dev.base}/openapi.json`)).json();
  });

  afterAll(async () => {
    await dev?.stop();
    await okHost?.close();
    await refusingHost?.close();
    rmSync(stateDir, { recursive: true, force: true });
  });

  it("is a valid OpenAPI 3.1 document by a maintained validator", async () => {
    const result = await validate(structuredClone(document));
    expect(result.valid ? "" : compileErrors(result)).toBe("");
    expect(document.openapi).toBe("3.1.0");
  });

  it("documents path parameters, optional bodies as optional and a schema for every answer", () => {
    const suspend = document.paths["/v1/sessions/{sid}/runs/{run_id}/suspend"].post;
    expect(
      suspend.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`),
    ).toEqual(["path:sid", "path:run_id"]);
    expect(document.paths["/v1/sessions/{sid}/runs"].post.requestBody.required).toBe(false);
    expect(document.paths["/v1/sessions/{sid}/inbox/claim"].post.requestBody.required).toBe(false);
    const completion = document.paths["/v1/sessions/{sid}/exec-jobs/{handle}/completion"].post;
    const gone = completion.responses["410"].content["application/problem+json"].schema;
    expect(gone.properties.code.enum.sort()).toEqual(["job_expired", "lifetime_ended"]);
    for (const [path, item] of Object.entries<
      Record<string, { responses: Record<string, { content?: object }> }>
    >(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const [status, response] of Object.entries<{ content?: object }>(
          operation.responses,
        )) {
          // Streamable HTTP takes a notification with 202 and no body.
          const bodiless = status === "204" || (status === "202" && path.endsWith("/mcp"));
          if (bodiless) expect(response.content, `${method} ${path} ${status}`).toBeUndefined();
          else expect(response.content, `${method} ${path} ${status}`).toBeDefined();
        }
      }
    }
  });

  it("every documented operation answers a real request with a status and body its schema allows", async () => {
    const api = await ConformanceChecker.create(dev.base, document);
    const agent = { token: AGENT_TOKEN };
    const operator = { token: OPERATOR };
    const sid = `contract-${Date.now()}`;
    const session = { ...agent, params: { sid } };

    await api.call("frontDoor", 200, { token: null });
    await api.call("health", 200, { token: null });
    await api.call("objectHealth", 200, { token: null });
    await api.call("openApiDocument", 200, { token: null });

    await api.call("createSession", 201, {
      ...agent,
      body: { id: sid, resume_url: okHost.url, metadata: { team: "contract" } },
    });
    await api.call("createSession", 409, { ...agent, body: { id: sid } });
    // No binding is allowed by this deployment: naming one is refused, as a bad resume_url is.
    await api.call("createSession", 422, {
      ...agent,
      body: { id: `${sid}-binding`, resume_binding: "SHELL_AGENT_WAKE" },
    });
    await api.call("getSession", 200, session);
    await api.call("getSession", 404, { ...agent, params: { sid: `${sid}-missing` } });
    await api.call("setRunner", 200, {
      ...session,
      body: { url: "http://127.0.0.1:8788", token: "contract-runner-token" },
    });
    await api.call("setRunner", 422, {
      ...session,
      body: { url: "http://runner.invalid", token: "contract-runner-token" },
    });
    await api.call("setRunner", 200, { ...session, body: null });
    const mcpHeaders = { accept: "application/json, text/event-stream" };
    await api.call("mcp", 200, {
      ...session,
      headers: mcpHeaders,
      body: { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} },
    });
    await api.call("mcp", 202, {
      ...session,
      headers: mcpHeaders,
      body: { jsonrpc: "2.0", method: "notifications/initialized" },
    });
    await api.call("mcp", 400, { ...session, headers: mcpHeaders, body: [] });
    await api.call("mcp", 406, {
      ...session,
      headers: { accept: "text/html" },
      body: { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} },
    });
    await api.call("appendMessage", 201, { ...session, body: { role: "user", content: "hi" } });
    await api.call("appendMessage", 422, { ...session, body: { role: "robot", content: "x" } });
    await api.call("listMessages", 200, { ...session, query: { limit: 10 } });
    await api.call("listMessages", 422, { ...session, query: { limit: 0 } });

    const reserved = await api.call("reserveJob", 201, {
      ...session,
      body: { handle: "h1", command: "sleep 1" },
    });
    await api.call("reserveJob", 200, { ...session, body: { handle: "h1", command: "sleep 1" } });
    await api.call("reserveJob", 409, { ...session, body: { handle: "h1", command: "other" } });
    await api.call("listJobs", 200, { ...session, query: { status: "running" } });

    const run = await api.call("registerRun", 201, session);
    const runParams = { ...agent, params: { sid, run_id: run.body.run_id } };
    await api.call("registerRun", 409, { ...session, body: { run_id: "another" } });
    await api.call("runNotifications", 200, { ...runParams, query: { after: 0, wait_ms: 0 } });
    await api.call("suspendRun", 200, { ...runParams, body: { waiting_for: ["h1"] } });
    await api.call("finishRun", 409, runParams);

    const callback = { token: reserved.body.callback.token, params: { sid, handle: "h1" } };
    const result = { status: "completed", exit_code: 0, output: "done" };
    await api.call("postHeartbeat", 200, { ...callback, body: { output_tail: "step 1\n" } });
    await api.call("postHeartbeat", 401, { ...callback, token: "forged" });
    await api.call("cancelJob", 202, { ...agent, params: { sid, handle: "h1" } });
    await api.call("postCompletion", 401, { ...callback, token: "forged", body: result });
    await api.call("postCompletion", 202, { ...callback, body: result });
    await api.call("postCompletion", 200, { ...callback, body: result });
    await api.call("postCompletion", 409, { ...callback, body: { ...result, exit_code: 1 } });
    await api.call("postHeartbeat", 409, callback);
    await api.call("cancelJob", 409, { ...agent, params: { sid, handle: "h1" } });
    await api.call("getJob", 200, { ...agent, params: { sid, handle: "h1" } });
    await viewWhen(dev.base, sid, (view) => view.resume?.state === "delivered");

    const resumed = await api.call("registerRun", 201, session);
    await api.call("getInbox", 200, session);
    const claimed = await api.call("claimInbox", 200, { ...session, body: { max: 4 } });
    expect(claimed.body.claims).toHaveLength(1);
    await api.call("ackInbox", 200, {
      ...session,
      body: { ids: [claimed.body.claims[0].envelope.id, "unknown-id"] },
    });
    await api.call("finishRun", 200, {
      ...agent,
      params: { sid, run_id: resumed.body.run_id },
    });
    await api.call("getSessionStats", 200, session);

    // Operators: one session's state and trail, then each action where it applies.
    const named = { ...operator, params: { tenant: "default", sid } };
    await api.call("opsGetSession", 200, named);
    await api.call("opsGetSession", 401, { ...named, token: AGENT_TOKEN });
    await api.call("opsListJobs", 200, named);
    await api.call("opsGetJob", 200, {
      ...operator,
      params: { tenant: "default", sid, handle: "h1" },
    });
    await api.call("reserveJob", 201, { ...session, body: { handle: "h2", command: "sleep 9" } });
    await api.call("opsCancelJob", 202, {
      ...operator,
      params: { tenant: "default", sid, handle: "h2" },
    });
    await api.call("opsMarkLost", 200, {
      ...operator,
      params: { tenant: "default", sid, handle: "h2" },
    });
    await api.call("opsExpireWait", 409, named);
    const armed = await api.call("registerRun", 201, session);
    await api.call("reserveJob", 201, { ...session, body: { handle: "h3", command: "sleep 9" } });
    await api.call("suspendRun", 200, {
      ...agent,
      params: { sid, run_id: armed.body.run_id },
      body: { waiting_for: ["h3"], wake: "any", ceiling_ms: 60_000 },
    });
    await api.call("opsExpireWait", 200, named);
    await api.call("opsRedeliver", 409, named);
    const trail = await api.call("opsListEvents", 200, { ...named, query: { limit: 500 } });
    const types = new Set(trail.body.events.map((event: { type: string }) => event.type));
    for (const type of [
      "completion",
      "run_registered",
      "run_suspended",
      "claim",
      "ack",
      "operator",
    ]) {
      expect(types).toContain(type);
    }

    // A resume its host refuses fails after its one attempt; the operator redelivers it.
    const failing = `${sid}-failing`;
    await api.call("createSession", 201, {
      ...agent,
      body: { id: failing, resume_url: refusingHost.url },
    });
    const job = await api.call("reserveJob", 201, {
      ...agent,
      params: { sid: failing },
      body: { handle: "f1", command: "true" },
    });
    await api.call("postCompletion", 202, {
      token: job.body.callback.token,
      params: { sid: failing, handle: "f1" },
      body: { status: "failed", exit_code: 2, output: "" },
    });
    await viewWhen(dev.base, failing, (view) => view.resume?.state === "failed");
    // The index is written after the commit (batched, in waitUntil): wait for the row.
    const failedList = `${dev.base}/v1/ops/sessions?status=failed`;
    for (let tries = 0; ; tries += 1) {
      const response = await fetch(failedList, {
        headers: { authorization: `Bearer ${OPERATOR}` },
      });
      const page = (await response.json()) as { sessions: { id: string }[] };
      if (page.sessions.some((entry: { id: string }) => entry.id === failing)) break;
      if (tries > 100) throw new Error("the failed session never reached the index");
      await sleep(100);
    }
    const listed = await api.call("opsListSessions", 200, {
      ...operator,
      query: { status: "failed" },
    });
    expect(listed.body.sessions.map((entry: { id: string }) => entry.id)).toContain(failing);
    await api.call("opsListSessions", 422, { ...operator, query: { cursor: "not-a-cursor" } });
    await api.call("opsRedeliver", 200, {
      ...operator,
      params: { tenant: "default", sid: failing },
    });

    // A full output: a part, a completion that names it (and one that names a missing one), reads.
    const big = await api.call("reserveJob", 201, {
      ...session,
      body: { handle: "big", command: "make test" },
    });
    const part = new TextEncoder().encode("the whole log\n".repeat(100));
    const partSha = createHash("sha256").update(part).digest("hex");
    const runner = { token: big.body.callback.token };
    await api.call("uploadOutputPart", 201, {
      ...runner,
      params: { sid, handle: "big", index: "0" },
      raw: part,
      headers: { "content-type": "application/octet-stream", "x-content-sha256": partSha },
    });
    await api.call("uploadOutputPart", 422, {
      ...runner,
      params: { sid, handle: "big", index: "1" },
      raw: part,
      headers: { "content-type": "application/octet-stream", "x-content-sha256": "0".repeat(64) },
    });
    const fullOutput = {
      bytes: part.byteLength,
      sha256: partSha,
      parts: [{ bytes: part.byteLength, sha256: partSha }],
    };
    const bigResult = {
      status: "completed",
      exit_code: 0,
      output: "log tail",
      output_truncated: true,
    };
    await api.call("postCompletion", 409, {
      ...runner,
      params: { sid, handle: "big" },
      body: {
        ...bigResult,
        full_output: {
          ...fullOutput,
          bytes: 2 * part.byteLength,
          parts: [fullOutput.parts[0], { bytes: part.byteLength, sha256: "1".repeat(64) }],
        },
      },
    });
    await api.call("postCompletion", 202, {
      ...runner,
      params: { sid, handle: "big" },
      body: { ...bigResult, full_output: fullOutput },
    });
    const bigJob = { ...agent, params: { sid, handle: "big" } };
    await api.call("getFullOutput", 200, bigJob);
    await api.call("getFullOutput", 206, { ...bigJob, headers: { range: "bytes=0-9" } });
    await api.call("getFullOutput", 416, {
      ...bigJob,
      headers: { range: `bytes=${part.byteLength}-` },
    });
    await api.call("getFullOutput", 404, { ...agent, params: { sid, handle: "h1" } });
    await api.call("opsGetFullOutput", 206, {
      ...operator,
      params: { tenant: "default", sid, handle: "big" },
      headers: { range: "bytes=0-9" },
    });

    await api.call("deleteSession", 204, session);
    await api.call("opsDeleteSession", 204, {
      ...operator,
      params: { tenant: "default", sid: failing },
    });
    await api.call("opsDeleteSession", 404, {
      ...operator,
      params: { tenant: "default", sid: failing },
    });

    expect(api.notExercised()).toEqual([]);
    expect(api.operationIds()).toHaveLength(38);
  });

  it("the checker itself refuses a drifted answer: an undeclared field, a duplicate as 202, a wrong type, a missing header", async () => {
    const answers = new Map<string, unknown>();
    const drifted = createServer((request, response) => {
      const body = answers.get(new URL(request.url ?? "/", "http://x").pathname);
      response.writeHead(body === undefined ? 404 : Number(answers.get("status") ?? 200), {
        "content-type": "application/json",
      });
      response.end(JSON.stringify(body ?? {}));
    });
    await new Promise<void>((resolve) => drifted.listen(0, "127.0.0.1", resolve));
    const { port } = drifted.address() as AddressInfo;
    try {
      const api = await ConformanceChecker.create(`http://127.0.0.1:${port}`, document);
      const summary = {
        handle: "h",
        command: "true",
        lifetime: "L",
        status: "running",
        exit_code: null,
        output_truncated: false,
        output_bytes_total: 0,
        output_bytes_total_known: true,
        ended_by: null,
        full_output: null,
        reserved_at: "2026-01-01T00:00:00.000Z",
        completed_at: null,
        heartbeat_timeout_ms: null,
        last_heartbeat_at: null,
        progress: null,
        cancel_requested: false,
      };
      const job = { ...summary, output: "" };
      const params = { sid: "s", handle: "h" };
      const serve = (path: string, body: unknown, status = 200) => {
        answers.set(path, body);
        answers.set("status", status);
      };

      serve("/v1/sessions/s/exec-jobs/h", job);
      await api.call("getJob", 200, { params });
      serve("/v1/sessions/s/exec-jobs/h", { ...job, callback_token: "leaked" });
      await expect(api.call("getJob", 200, { params })).rejects.toThrow(/additional properties/);
      serve("/v1/sessions/s/exec-jobs/h", { ...job, exit_code: "0" });
      await expect(api.call("getJob", 200, { params })).rejects.toThrow(/exit_code must be/);

      serve("/v1/sessions/s/exec-jobs", { jobs: [summary], next: null });
      await api.call("listJobs", 200, { params });
      serve("/v1/sessions/s/exec-jobs", { jobs: [job], next: null });
      await expect(api.call("listJobs", 200, { params })).rejects.toThrow(/additional properties/);

      const completion = "/v1/sessions/s/exec-jobs/h/completion";
      serve(completion, { outcome: "accepted", generation: 1, disposition: "queued" }, 202);
      await api.call("postCompletion", 202, { params, body: {} });
      serve(completion, { outcome: "duplicate", generation: 1 }, 202);
      await expect(api.call("postCompletion", 202, { params, body: {} })).rejects.toThrow(
        /does not match its schema/,
      );
      serve(completion, { code: "unauthorized" }, 401);
      await expect(api.call("postCompletion", 401, { params, body: {} })).rejects.toThrow(
        /header www-authenticate missing/,
      );
    } finally {
      await new Promise((resolve) => drifted.close(resolve));
    }
  });

  it("the typed client has one method per agent operation, and its stats method answers", async () => {
    // The client's names for the agent operations; the runner's completion is postCompletion().
    const methods: Record<string, keyof ExecInboxClient> = {
      createSession: "createSession",
      setRunner: "setRunner",
      getSession: "getSession",
      deleteSession: "deleteSession",
      getSessionStats: "getSessionStats",
      appendMessage: "appendMessage",
      listMessages: "listMessages",
      registerRun: "registerRun",
      suspendRun: "suspend",
      finishRun: "finishRun",
      runNotifications: "notifications",
      reserveJob: "reserveJob",
      cancelJob: "cancelJob",
      getJob: "getJob",
      getFullOutput: "readFullOutput",
      listJobs: "listJobs",
      getInbox: "inbox",
      claimInbox: "claim",
      ackInbox: "ack",
    };
    const agentOperations = Object.values<Record<string, any>>(document.paths)
      .flatMap((item) => Object.values(item))
      .filter((operation) => JSON.stringify(operation.security) === '[{"agentToken":[]}]')
      .map((operation) => operation.operationId)
      // Any MCP client (the SDK's) calls the MCP endpoint; the typed client does not.
      .filter((operationId) => operationId !== "mcp")
      .sort();
    expect(agentOperations).toEqual(Object.keys(methods).sort());
    for (const method of Object.values(methods)) {
      expect(typeof ExecInboxClient.prototype[method], method).toBe("function");
    }
    const client = new ExecInboxClient({ baseUrl: dev.base, token: AGENT_TOKEN });
    const sid = `client-stats-${Date.now()}`;
    await client.createSession({ id: sid });
    expect(Object.keys(await client.getSessionStats(sid)).sort()).toEqual([
      "alarms",
      "database_bytes",
      "index_rows_written",
      "rows_read",
      "rows_written",
      "sql_statements",
    ]);
  });
});

// A real agent host that answers a resume with 200 headers and then drops the connection in the
// middle of its body, under the real wrangler dev: that answer must count as a failed attempt.
import { createServer, type Server } from "node:http";
import { postCompletion } from "@exec-inbox/client";
import { describe, expect, it } from "vitest";
import { useServer } from "../support/e2e-arrange";
import { useWranglerDev } from "../support/local-dev";
import { listenLocally, suspendedSession, viewWhen } from "../support/local-stack";

/** Breaks off every answer after its headers and a first chunk until `recover()` is called. */
async function startBreakingHost() {
  const received: { webhookId: string; broken: boolean }[] = [];
  let breaking = true;
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      received.push({ webhookId: String(request.headers["webhook-id"]), broken: breaking });
      if (!breaking) {
        response.writeHead(200).end("ok");
        return;
      }
      // No content-length: the body is chunked, so the client sees it end without its last chunk.
      response.writeHead(200, { "content-type": "text/plain" });
      response.write("accepted, now crashing");
      setTimeout(() => response.socket?.destroy(), 100);
    });
  });
  return {
    url: `http://127.0.0.1:${await listenLocally(server)}/resume`,
    received,
    recover: () => {
      breaking = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe("an agent host that drops the connection mid-answer", () => {
  const local = useWranglerDev("broken-host", { RESUME_URL_ALLOWLIST: "http://127.0.0.1:*" });
  const host = useServer(startBreakingHost);

  it("gets a failed attempt with a clear last_error, and the same resume is delivered on retry", async () => {
    const sid = `broken-host-${Date.now()}`;
    const callback = await suspendedSession(local.dev.base, sid, host().url, "h");
    const completed = await postCompletion(callback, {
      status: "completed",
      exit_code: 0,
      output: "done",
    });
    expect(completed).toMatchObject({ outcome: "accepted", disposition: "resume_scheduled" });

    // Each broken answer is recorded as a failure; the resume stays due, not delivered.
    const failing = await viewWhen(local.dev.base, sid, (view) => Boolean(view.resume?.last_error));
    expect(failing.status).toBe("resuming");
    expect(failing.resume).toMatchObject({ state: "scheduled", delivered_at: null });
    expect(failing.resume.attempts).toBeGreaterThanOrEqual(1);
    expect(failing.resume.last_error).toMatch(/^agent host answered 200 but broke off its body/);

    host().recover();
    const delivered = await viewWhen(
      local.dev.base,
      sid,
      (view) => view.resume?.state === "delivered",
    );
    expect(delivered.resume.last_error).toBeNull();
    expect(delivered.resume.attempts).toBe(host().received.length);
    expect(host().received.length).toBeGreaterThanOrEqual(2);
    expect(host().received.at(-1)?.broken).toBe(false);
    expect(host().received.filter((entry) => entry.broken).length).toBeGreaterThanOrEqual(1);
    expect(new Set(host().received.map((entry) => entry.webhookId))).toEqual(
      new Set([delivered.resume.resume_id]),
    );
  });
});

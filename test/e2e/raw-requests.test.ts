// Requests no HTTP client library would send, written byte for byte to the real wrangler dev.
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { useWranglerDev } from "../support/local-dev";
import { AGENT_TOKEN } from "../support/local-stack";

/** Sends `lines` as one HTTP/1.1 request and returns the status line, headers and body. */
function rawRequest(port: number, lines: string[], body = ""): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => {
      socket.end(`${lines.join("\r\n")}\r\nConnection: close\r\n\r\n${body}`);
    });
    let answer = "";
    socket.on("data", (chunk) => {
      answer += chunk;
    });
    socket.on("end", () => resolve(answer));
    socket.on("error", reject);
  });
}

describe("raw requests to wrangler dev", () => {
  const local = useWranglerDev("raw");

  it("two Authorization headers get a problem+json 401, not a plain-text error", async () => {
    const answer = await rawRequest(local.port, [
      "GET /v1/sessions/anything HTTP/1.1",
      "Host: 127.0.0.1",
      `Authorization: Bearer ${AGENT_TOKEN}`,
      `Authorization: Bearer ${AGENT_TOKEN}`,
    ]);
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    expect(answer.toLowerCase()).toContain("content-type: application/problem+json");
    expect(answer).toContain('"code":"unauthorized"');
    expect(answer).toContain("send exactly one");
  });

  it("two Authorization headers on a completion get a problem+json 401", async () => {
    const body = JSON.stringify({ status: "completed", exit_code: 0, output: "" });
    const answer = await rawRequest(
      local.port,
      [
        "POST /v1/sessions/s/exec-jobs/h/completion HTTP/1.1",
        "Host: 127.0.0.1",
        "Authorization: Bearer eib3.a.b",
        "Authorization: Bearer eib3.c.d",
        "Content-Type: application/json",
        `Content-Length: ${body.length}`,
      ],
      body,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    expect(answer).toContain('"code":"unauthorized"');
    expect(answer).toContain("send exactly one");
  });
});

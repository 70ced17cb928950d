import { describe, expect, it } from "vitest";
import { answerThrown } from "../../src/http/app";

async function problemOf(response: Response) {
  return {
    status: response.status,
    type: response.headers.get("content-type"),
    retryAfter: response.headers.get("retry-after"),
    body: (await response.json()) as { detail: string },
  };
}

describe("a request the storage cannot serve now", () => {
  // The runtime's own words for SQLite out of memory (a production isolate's limit; locally
  // workerd no longer caps SQLite's heap) and for the other failures a retry gets past.
  it("SQLite out of memory is answered 503 unavailable with Retry-After, never 500", async () => {
    const error = new Error("out of memory: SQLITE_NOMEM");
    expect(await problemOf(answerThrown(error))).toEqual({
      status: 503,
      type: "application/problem+json",
      retryAfter: "5",
      body: {
        type: "https://exec-inbox.dev/problems/unavailable",
        title: "Session unavailable",
        status: 503,
        detail: "the session cannot be served now (storage out of memory); retry",
        code: "unavailable",
      },
    });
  });

  it("an object the runtime calls overloaded, a failure it marks retryable, or its own withheld internal error is 503 too", async () => {
    const overloaded = Object.assign(
      new Error("Durable Object is overloaded. Too many requests."),
      {
        overloaded: true,
      },
    );
    const reset = Object.assign(new Error("Network connection lost."), { retryable: true });
    // A new object's database failing to open for want of memory.
    const unopened = new Error("internal error; reference = 2nvu5t57upvdukmh7sueukpt");
    for (const [error, reason] of [
      [overloaded, "object overloaded"],
      [reset, "transient failure of the session object"],
      [unopened, "the runtime could not open the object"],
    ] as const) {
      const answer = await problemOf(answerThrown(error));
      expect(answer).toMatchObject({ status: 503, retryAfter: "5" });
      expect(answer.body.detail).toContain(reason);
    }
  });

  it("a bug stays 500 internal, with no Retry-After and nothing of its message", async () => {
    const answer = await problemOf(answerThrown(new TypeError("x is undefined: secret-token")));
    expect(answer).toEqual({
      status: 500,
      type: "application/problem+json",
      retryAfter: null,
      body: {
        type: "https://exec-inbox.dev/problems/internal",
        title: "Internal error",
        status: 500,
        detail: "internal error",
        code: "internal",
      },
    });
  });
});

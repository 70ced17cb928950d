// Every id the API accepts must survive a trip through a URL unchanged: the callback URL of a job
// and every /v1/sessions/{sid}/… path carry ids verbatim, and a URL parser drops dot segments.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { idSchema } from "../../src/domain/schemas";
import { call } from "../support/api";

const CHARSET = [..."ABCXYZabcxyz0189._:-"];
/** Ids over the charset, biased towards dots: `.`, `..` and `...` must all come up. */
const charsetId = fc.oneof(
  fc.constantFrom(".", "..", "...", ".a", "a.", "..."),
  fc.string({ unit: fc.constantFrom(...CHARSET), minLength: 1, maxLength: 6 }),
  fc.string({ unit: fc.constantFrom(".", "-"), minLength: 1, maxLength: 3 }),
  fc.stringMatching(/^[A-Za-z0-9._:-]{1,128}$/),
);

const completionPath = (sid: string, handle: string) =>
  `/v1/sessions/${sid}/exec-jobs/${handle}/completion`;
const roundTrips = (sid: string, handle: string) =>
  new URL(`http://x${completionPath(sid, handle)}`).pathname === completionPath(sid, handle);

describe("accepted ids round-trip through URLs", () => {
  it("an id of the charset is accepted exactly when it survives URL parsing", () => {
    fc.assert(
      fc.property(charsetId, charsetId, (sid, handle) => {
        const accepted = idSchema.safeParse(sid).success && idSchema.safeParse(handle).success;
        expect(accepted).toBe(roundTrips(sid, handle));
      }),
      { numRuns: 2000 },
    );
  });

  it("a session and a job with accepted ids are reached at the URLs the service hands out", async () => {
    await fc.assert(
      fc.asyncProperty(
        charsetId.filter((id) => idSchema.safeParse(id).success),
        charsetId.filter((id) => idSchema.safeParse(id).success),
        async (sid, handle) => {
          const created = await call("POST", "/v1/sessions", { body: { id: sid } });
          expect(created.status).toBe(201);
          try {
            expect((await call("GET", `/v1/sessions/${sid}`)).body.id).toBe(sid);
            const reserved = await call("POST", `/v1/sessions/${sid}/exec-jobs`, {
              body: { handle, command: "true" },
            });
            expect(reserved.status).toBe(201);
            const url = new URL(reserved.body.callback.url);
            expect(url.pathname).toBe(completionPath(sid, handle));
            const completed = await call("POST", url.pathname, {
              body: { status: "completed", exit_code: 0, output: "" },
              token: reserved.body.callback.token,
            });
            expect(completed.status).toBe(202);
            const pulled = await call("GET", `/v1/sessions/${sid}/exec-jobs/${handle}`);
            expect(pulled.body).toMatchObject({ handle, status: "completed" });
          } finally {
            // Ids repeat across runs and shrinking: each run leaves the id free again.
            expect((await call("DELETE", `/v1/sessions/${sid}`)).status).toBe(204);
          }
        },
      ),
      { numRuns: 30 },
    );
    // Five requests per run: the time bound is for a loaded machine, not a measurement.
  }, 60_000);
});

// Handlers for full outputs (table: routes/outputs.ts): parts stream from the runner into R2 and
// back out to the agent by range, never whole in the Worker. Which job may do what is the domain's.
import type { OpenAPIHono } from "@hono/zod-openapi";
import { MAX_PART_BYTES, PART_SHA256_HEADER } from "../../shared/full-output";
import { problem } from "../../shared/problem";
import type { Result } from "../domain/errors";
import { partKey, partSlices, rangeAsk, rangeStands } from "../domain/full-output";
import type { FullOutput } from "../domain/state";
import { type AppEnv, sessionStub, tenantSessionStub } from "./context";
import { callbackToken } from "./jobs";
import * as routes from "./routes/outputs";
import { answer, serve } from "./serve";

const noBucket = () => problem("internal", "no R2 bucket is bound as OUTPUTS");

/** The bytes `start`…`end` of a full output, part after part, as one stream of known length. */
function streamRange(
  bucket: R2Bucket,
  prefix: string,
  output: FullOutput,
  start: number,
  end: number,
) {
  const { readable, writable } = new FixedLengthStream(end - start + 1);
  const pump = async () => {
    for (const slice of partSlices(output, start, end)) {
      const part = output.parts[slice.index];
      if (part === undefined) throw new Error("a slice outside the parts");
      const object = await bucket.get(partKey(prefix, slice.index, part.sha256), {
        range: { offset: slice.offset, length: slice.length },
      });
      if (object === null) throw new Error(`part ${slice.index} is missing from the bucket`);
      await object.body.pipeTo(writable, { preventClose: true });
    }
    await writable.close();
  };
  pump().catch((error: unknown) => {
    console.error(`full output stream failed: ${error instanceof Error ? error.name : "error"}`);
    void writable.abort(error).catch(() => undefined);
  });
  return readable;
}

/**
 * The whole output (200) or the range asked for (206), streamed part after part; 416 past its end.
 * An `If-Range` that does not match makes it the whole output. A HEAD gets the same status and
 * headers, with the length, and nothing is read from the bucket.
 */
function fullOutputAnswer(
  bucket: R2Bucket | undefined,
  found: Result<{ prefix: string; output: FullOutput }>,
  request: { range?: string | undefined; ifRange?: string | undefined; method: string },
): Response {
  if (!found.ok) return problem(found.code, found.detail);
  if (bucket === undefined) return noBucket();
  const { prefix, output } = found.value;
  const etag = `"${output.sha256}"`;
  const headers = new Headers({
    "accept-ranges": "bytes",
    "content-type": "application/octet-stream",
    etag,
  });
  const range = rangeStands(request.ifRange, etag) ? request.range : undefined;
  const ask = rangeAsk(range, output.bytes);
  if (ask.kind === "unsatisfiable") {
    const refused = problem(
      "range_not_satisfiable",
      `the output has ${output.bytes} bytes; the range starts past its end`,
    );
    refused.headers.set("content-range", `bytes */${output.bytes}`);
    return refused;
  }
  const [start, end, status] =
    ask.kind === "whole" ? [0, output.bytes - 1, 200] : [ask.start, ask.end, 206];
  if (ask.kind === "range") headers.set("content-range", `bytes ${start}-${end}/${output.bytes}`);
  if (request.method === "HEAD") {
    headers.set("content-length", String(end - start + 1));
    return new Response(null, { status, headers });
  }
  return new Response(streamRange(bucket, prefix, output, start, end), { status, headers });
}

/** What a read of a full output asks, from its request. */
const readOf = (req: { header(name: string): string | undefined; method: string }) => ({
  range: req.header("range"),
  ifRange: req.header("if-range"),
  method: req.method,
});

export function outputRoutes(app: OpenAPIHono<AppEnv>): void {
  serve(
    app,
    routes.uploadPart,
    async (c) => {
      const { sid, handle, index } = c.req.valid("param");
      const sha256 = c.req.valid("header")[PART_SHA256_HEADER];
      const claims = c.var.callback;
      // As the completion's full_output: a legacy token names no reservation, so no prefix.
      if (claims.seq === null) {
        return problem(
          "invalid_request",
          "a full output needs a callback token from a reservation made since revision 2: reserve the job again",
        );
      }
      const declared = c.req.header("content-length");
      const bytes = Number(declared);
      if (declared === undefined || !Number.isSafeInteger(bytes) || bytes < 1) {
        return problem("invalid_request", "a part needs a Content-Length of at least 1 byte");
      }
      if (bytes > MAX_PART_BYTES) {
        return problem(
          "payload_too_large",
          `a part is at most ${MAX_PART_BYTES} bytes; this one is ${bytes}`,
        );
      }
      const body = c.req.raw.body;
      if (body === null) return problem("invalid_request", "a part needs a body");
      const bucket = c.env.OUTPUTS;
      if (bucket === undefined) return noBucket();
      const stub = tenantSessionStub(c.env, claims.tenant, sid);
      const job = { lifetime: claims.lifetime, handle, tokenSeq: claims.seq };
      const accepted = await stub.acceptPart({ ...job, bytes });
      if (!accepted.ok) return problem(accepted.code, accepted.detail);
      const key = partKey(accepted.value.prefix, Number(index), sha256);
      try {
        // R2 checks the SHA-256 as the bytes arrive and refuses a put whose bytes differ (error
        // 10037): a part with other bytes is never stored under its key, and nothing is held here
        // (hashing here as well would cost upload rate, and a tee into a hash has no backpressure).
        await bucket.put(key, body.pipeThrough(new FixedLengthStream(bytes)), { sha256 });
      } catch (error) {
        // Nothing was stored: the tally gives the part back (should that fail, it only counts).
        await stub.releasePart({ ...job, bytes }).catch(() => undefined);
        if (error instanceof Error && /checksum .*did not match/i.test(error.message)) {
          return problem("digest_mismatch", `part ${index}'s bytes do not have sha256 ${sha256}`);
        }
        throw error;
      }
      // The session may have ended, or the job been purged, while the part streamed: the sweep
      // may have listed its prefix before the part landed, so the part goes by this request.
      const fence = await stub.callbackFence(job);
      if (!fence.ok) {
        await bucket.delete(key);
        return problem(fence.code, fence.detail);
      }
      return answer(routes.uploadPart, 201, {
        ok: true,
        value: { index: Number(index), bytes, sha256 },
      });
    },
    { before: [callbackToken], rawBody: true },
  );

  serve(app, routes.getOutput, async (c) => {
    const { sid, handle } = c.req.valid("param");
    const found = await sessionStub(c, sid).fullOutput({ handle });
    return fullOutputAnswer(c.env.OUTPUTS, found, readOf(c.req));
  });

  serve(app, routes.opsGetOutput, async (c) => {
    const { tenant, sid, handle } = c.req.valid("param");
    const found = await tenantSessionStub(c.env, tenant, sid).fullOutput({ handle });
    return fullOutputAnswer(c.env.OUTPUTS, found, readOf(c.req));
  });
}

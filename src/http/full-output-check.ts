// Checks the parts a completion's `full_output` names against the bucket, before the completion
// reaches the session object; the runner's journal re-sends whatever the answer names.
import type { FullOutputBody } from "../../shared/full-output";
import { problem } from "../../shared/problem";
import { missingParts } from "../domain/full-output";
import type { Env } from "../env";

const MAX_LIST_PAGES = 8;

/**
 * Sizes by key under a job's prefix: one list for up to 1,000 parts. Parts re-sent with other
 * bytes leave keys of their own (decision 601), so a few more pages may be needed; bounded.
 */
async function storedParts(bucket: R2Bucket, prefix: string): Promise<Map<string, number>> {
  const stored = new Map<string, number>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_LIST_PAGES; page += 1) {
    const listed = await bucket.list({ prefix, limit: 1000, ...(cursor ? { cursor } : {}) });
    for (const object of listed.objects) stored.set(object.key, object.size);
    if (!listed.truncated) break;
    cursor = listed.cursor;
  }
  return stored;
}

/**
 * Checks the parts a completion names against the bucket: one list of the job's prefix. Null
 * when all are there as named; else the problem, which names each missing part.
 */
export async function checkFullOutput(
  env: Env,
  prefix: string,
  output: FullOutputBody,
  maxBytes: number,
): Promise<Response | null> {
  if (output.bytes > maxBytes) {
    const message = `full_output is ${output.bytes} bytes; the limit is ${maxBytes}`;
    // The path tells a runner this 413 from the body's: resend without full_output, not shorter.
    return problem("payload_too_large", message, {
      errors: [{ path: "full_output.bytes", message }],
    });
  }
  if (env.OUTPUTS === undefined) return problem("internal", "no R2 bucket is bound as OUTPUTS");
  const stored = await storedParts(env.OUTPUTS, prefix);
  const errors = missingParts(prefix, output, stored);
  if (errors.length === 0) return null;
  const detail = `${errors.length} of ${output.parts.length} parts are not stored as named: ${errors
    .slice(0, 8)
    .map((error) => error.message)
    .join("; ")}`;
  return problem("output_incomplete", detail, { errors });
}

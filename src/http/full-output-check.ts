// Checks the parts a completion's `full_output` names against the bucket, before the completion
// reaches the session object; the runner's journal re-sends whatever the answer names.
import type { FullOutputBody } from "../../shared/full-output";
import { problem } from "../../shared/problem";
import { missingParts, partKey } from "../domain/full-output";
import type { Env } from "../env";

/** Heads in flight at once: a Worker has six connections open at a time, the rest would queue. */
const HEADS_AT_ONCE = 6;

/**
 * Sizes by key of the parts a completion names. One list of the job's prefix holds them all (up to
 * 1,000 parts) unless parts were re-sent with other bytes: each such re-send leaves a key of its
 * own (the key carries the part's hash, so a retry never overwrites what a completion may
 * already name), so however many there are, a named part the first page did not show is
 * looked up by its key. The count of re-sends never hides a part.
 */
async function storedParts(
  bucket: R2Bucket,
  prefix: string,
  output: FullOutputBody,
): Promise<Map<string, number>> {
  const listed = await bucket.list({ prefix, limit: 1000 });
  const stored = new Map(listed.objects.map((object) => [object.key, object.size]));
  if (!listed.truncated) return stored;
  const unseen = output.parts
    .map((part, index) => partKey(prefix, index, part.sha256))
    .filter((key) => !stored.has(key));
  for (let first = 0; first < unseen.length; first += HEADS_AT_ONCE) {
    const heads = unseen.slice(first, first + HEADS_AT_ONCE).map((key) => bucket.head(key));
    for (const object of await Promise.all(heads)) {
      if (object !== null) stored.set(object.key, object.size);
    }
  }
  return stored;
}

/**
 * Checks the parts a completion names against the bucket: one list of the job's prefix, and a
 * head for each named part it did not show. Null when all are there as named; else the problem,
 * which names each missing part.
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
  const stored = await storedParts(env.OUTPUTS, prefix, output);
  const errors = missingParts(prefix, output, stored);
  if (errors.length === 0) return null;
  const detail = `${errors.length} of ${output.parts.length} parts are not stored as named: ${errors
    .slice(0, 8)
    .map((error) => error.message)
    .join("; ")}`;
  return problem("output_incomplete", detail, { errors });
}

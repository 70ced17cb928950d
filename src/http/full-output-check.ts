// Checks the parts a completion's `full_output` names against the bucket, before the completion
// reaches the session object; the runner's journal re-sends whatever the answer names.
import type { FullOutputBody } from "../../shared/full-output";
import { problem } from "../../shared/problem";
import { missingParts } from "../domain/full-output";
import type { Env } from "../env";

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
    return problem(
      "payload_too_large",
      `full_output is ${output.bytes} bytes; the limit is ${maxBytes}`,
    );
  }
  if (env.OUTPUTS === undefined) return problem("internal", "no R2 bucket is bound as OUTPUTS");
  const listed = await env.OUTPUTS.list({ prefix, limit: 1000 });
  const stored = new Map(listed.objects.map((object) => [object.key, object.size]));
  const errors = missingParts(prefix, output, stored);
  if (errors.length === 0) return null;
  const detail = `${errors.length} of ${output.parts.length} parts are not stored as named: ${errors
    .slice(0, 8)
    .map((error) => error.message)
    .join("; ")}`;
  return problem("output_incomplete", detail, { errors });
}

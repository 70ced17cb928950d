// Full outputs (contract §9 "Outputs of any size"): where their parts live in R2, whether a
// completion's parts are all there, which runner may upload, and which bytes a Range asks for.
// Streaming the bytes, listing and deleting objects are left to the HTTP layer and the shell.

import type { Decision, Loaded, Rule } from "./decision";
import { decided } from "./decision";
import { fail } from "./errors";
import { callbackJob, jobAndTombstone } from "./jobs";
import { fullOutputBytesRefusal, type Quotas } from "./quotas";
import type { FullOutput } from "./state";

interface JobKey {
  readonly tenant: string;
  readonly sessionId: string;
  readonly lifetime: string;
}

/**
 * Every object of one session lifetime lies under this prefix, so a session's delete is one
 * prefix. No id holds a `/` (ID_PATTERN, TENANT_PATTERN), so no prefix is another's prefix.
 */
export const lifetimePrefix = (key: JobKey): string =>
  `outputs/${key.tenant}/${key.sessionId}/${key.lifetime}/`;

/** One job's parts: its handle and reservation `seq`, so a handle reserved again is another job. */
export const jobPrefix = (
  key: JobKey & { readonly handle: string; readonly seq: number },
): string => `${lifetimePrefix(key)}${key.handle}/${key.seq}/`;

/**
 * A part is stored under its index and its SHA-256: a part sent again with the same bytes
 * replaces itself, and a part sent with other bytes can never change what a completion named.
 */
export const partKey = (prefix: string, index: number, sha256: string): string =>
  `${prefix}${String(index).padStart(4, "0")}.${sha256}`;

/** Each part the completion names that storage does not hold as named, by index. */
export function missingParts(
  prefix: string,
  output: FullOutput,
  stored: ReadonlyMap<string, number>,
): { path: string; message: string }[] {
  const missing: { path: string; message: string }[] = [];
  output.parts.forEach((part, index) => {
    const size = stored.get(partKey(prefix, index, part.sha256));
    if (size === undefined) {
      missing.push({
        path: `full_output.parts.${index}`,
        message: `part ${index} with sha256 ${part.sha256} is not uploaded`,
      });
    } else if (size !== part.bytes) {
      missing.push({
        path: `full_output.parts.${index}`,
        message: `part ${index} has ${size} bytes, not ${part.bytes}`,
      });
    }
  });
  return missing;
}

/** What a `Range` header asks of an output of `size` bytes (RFC 9110 §14). */
export type RangeAsk =
  | { readonly kind: "whole" }
  | { readonly kind: "range"; readonly start: number; readonly end: number }
  | { readonly kind: "unsatisfiable" };

/** The unit is case-insensitive (RFC 9110 §14.1), so `Bytes=0-9` is a range too. */
const SINGLE_RANGE = /^bytes=(\d*)-(\d*)$/i;

/**
 * One byte range, inclusive. A header the service cannot read (another unit, several ranges) is
 * ignored and the whole output is sent, as RFC 9110 allows; a range starting past the end is 416.
 */
export function rangeAsk(header: string | null | undefined, size: number): RangeAsk {
  if (header === null || header === undefined) return { kind: "whole" };
  const match = SINGLE_RANGE.exec(header.trim());
  if (match === null) return { kind: "whole" };
  const [, first = "", last = ""] = match;
  if (first === "" && last === "") return { kind: "whole" };
  if (first === "") {
    // A suffix: the last N bytes.
    const length = Number(last);
    if (length === 0) return { kind: "unsatisfiable" };
    return { kind: "range", start: Math.max(0, size - length), end: size - 1 };
  }
  const start = Number(first);
  const end = last === "" ? size - 1 : Math.min(Number(last), size - 1);
  if (!Number.isSafeInteger(start) || start >= size) return { kind: "unsatisfiable" };
  if (end < start) return { kind: "whole" };
  return { kind: "range", start, end };
}

/**
 * Whether a `Range` may be served under this `If-Range` (RFC 9110 §13.1.5): with none, or with a
 * strong ETag equal to the output's. A weak tag never matches (strong comparison), and a date
 * cannot, since no `Last-Modified` is sent. Otherwise the whole output goes: a client resuming
 * a read of an output since replaced (its session re-created) must not splice two outputs.
 */
export const rangeStands = (ifRange: string | null | undefined, etag: string): boolean =>
  ifRange === null || ifRange === undefined || ifRange.trim() === etag;

/** The pieces of parts that hold bytes `start`…`end` (inclusive), in order. */
export function partSlices(
  output: FullOutput,
  start: number,
  end: number,
): { index: number; offset: number; length: number }[] {
  const slices: { index: number; offset: number; length: number }[] = [];
  let partStart = 0;
  output.parts.forEach((part, index) => {
    const partEnd = partStart + part.bytes - 1;
    if (partEnd >= start && partStart <= end) {
      const offset = Math.max(start, partStart) - partStart;
      const last = Math.min(end, partEnd) - partStart;
      slices.push({ index, offset, length: last - offset + 1 });
    }
    partStart += part.bytes;
  });
  return slices;
}

/**
 * A part upload's command: the callback token's claims and the part's size. `maxBytes` bounds
 * what one job may upload, re-sends included: twice the largest full output, so one full
 * re-send after a crash always fits. `quota` bounds what the whole session holds.
 */
export interface UploadCmd {
  readonly lifetime: string;
  readonly handle: string;
  readonly tokenSeq: number | null;
  readonly bytes: number;
  readonly maxBytes: number;
  /** The full-output bytes quota: the bytes the session's jobs hold, read only when asked. */
  readonly quota?: { readonly held: () => number; readonly quotas: Quotas };
}

/**
 * Before a part streams to R2: only the runner of a running job of this lifetime uploads (the
 * same fences as its completion), and the job's tally takes the part first, so a job can never
 * hold more than its bound. The reply is the job's prefix.
 */
export function acceptPart(loaded: Loaded, cmd: UploadCmd): Decision<string> {
  const found = callbackJob(loaded.session, cmd);
  if (!found.ok) return found;
  const { session, job } = found.value;
  if (job.result !== null) {
    return fail("result_conflict", `job ${cmd.handle} already has a result: its output is fixed`);
  }
  const uploaded = (job.uploadedBytes ?? 0) + cmd.bytes;
  if (uploaded > cmd.maxBytes) {
    return fail(
      "payload_too_large",
      `job ${cmd.handle} would have ${uploaded} bytes of parts uploaded; the limit is ${cmd.maxBytes}`,
    );
  }
  const refusal =
    cmd.quota === undefined
      ? null
      : fullOutputBytesRefusal(cmd.quota.held(), cmd.bytes, cmd.quota.quotas);
  if (refusal !== null) return refusal;
  const prefix = jobPrefix({
    tenant: session.tenant,
    sessionId: session.id,
    lifetime: session.lifetime,
    handle: job.handle,
    seq: job.seq,
  });
  const next = { ...job, uploadedBytes: uploaded };
  return decided(
    { ...session, jobs: { ...session.jobs, [job.handle]: next } },
    prefix,
    [],
    [{ type: "add_uploaded_bytes", handle: job.handle, bytes: cmd.bytes }],
  );
}

/**
 * After a part's put failed (its bytes did not match their hash, storage refused it): the tally
 * gives back what `acceptPart` took, since nothing was stored. Taken before the put, the bound
 * holds however many parts stream at once; given back, a refused part costs nothing.
 */
export function releasePart(loaded: Loaded, cmd: Omit<UploadCmd, "maxBytes">): Decision<null> {
  const found = callbackJob(loaded.session, cmd);
  if (!found.ok) return found;
  const { session, job } = found.value;
  // A job with a result takes no more parts: its tally no longer matters.
  if (job.result !== null || (job.uploadedBytes ?? 0) < cmd.bytes) return decided(session, null);
  const next = { ...job, uploadedBytes: (job.uploadedBytes ?? 0) - cmd.bytes };
  return decided(
    { ...session, jobs: { ...session.jobs, [job.handle]: next } },
    null,
    [],
    [{ type: "add_uploaded_bytes", handle: job.handle, bytes: -cmd.bytes }],
  );
}

export const partReleaseRule: Rule<Omit<UploadCmd, "maxBytes">, null> = {
  needs: (core, cmd) =>
    core.lifetime !== cmd.lifetime ? {} : jobAndTombstone(cmd.handle, cmd.tokenSeq === null, false),
  absent: () => fail("lifetime_ended", "the session lifetime this job belongs to has ended"),
  decide: releasePart,
};

/** The shell's upload: the session's held bytes as a read, counted against the tenant's quota. */
export type PartUpload = Omit<UploadCmd, "quota"> & { readonly held?: () => number };

export const partUploadRule: Rule<PartUpload, string> = {
  needs: (core, cmd) =>
    core.lifetime !== cmd.lifetime ? {} : jobAndTombstone(cmd.handle, cmd.tokenSeq === null, false),
  absent: () => fail("lifetime_ended", "the session lifetime this job belongs to has ended"),
  decide: (loaded, { held, ...cmd }, ctx) =>
    acceptPart(
      loaded,
      held === undefined || ctx.config.quotas === undefined
        ? cmd
        : { ...cmd, quota: { held, quotas: ctx.config.quotas } },
    ),
};

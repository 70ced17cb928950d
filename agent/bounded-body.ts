// Reads a request body as text, streamed and capped, before anything trusts it: the agent host's
// routes are open to whoever can reach them. What a refused body gets answered is the caller's.
import { readCapped } from "../shared/capped-read";
import { depthDetail, depthExceededAt } from "../shared/json-depth";

/** A resume webhook's body is ~300 bytes; 16 KiB leaves room for longer ids and names. */
export const MAX_RESUME_BODY_BYTES = 16 * 1024;

export type BoundedText =
  | { readonly ok: true; readonly text: string }
  | { readonly ok: false; readonly status: 413 | 422; readonly error: string };

/**
 * The body as UTF-8 text, or 413 as soon as it passes `maxBytes` (a declared length over it is
 * refused before a byte is read; the rest of the stream is cancelled, never buffered).
 */
export async function readBoundedText(request: Request, maxBytes: number): Promise<BoundedText> {
  const tooLarge = {
    ok: false,
    status: 413,
    error: `request body is larger than ${maxBytes} bytes`,
  } as const;
  const read = await readCapped(request, maxBytes, (reader) => reader.cancel());
  if (!read.ok) return tooLarge;
  try {
    return {
      ok: true,
      text: new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(read.bytes),
    };
  } catch {
    return { ok: false, status: 422, error: "request body is not valid UTF-8" };
  }
}

type Refusal = Extract<BoundedText, { ok: false }>;

/** `text` as JSON within the shared nesting limit, or why not (422: malformed, or too deep). */
export function parseBoundedJson(
  text: string,
): { readonly ok: true; readonly value: unknown } | Refusal {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, status: 422, error: `malformed JSON: ${String(error)}` };
  }
  // JSON.parse does not recurse; what walks the value next (schemas, copies) does.
  const tooDeep = depthExceededAt(text);
  return tooDeep === null
    ? { ok: true, value }
    : { ok: false, status: 422, error: depthDetail(tooDeep) };
}

/** `readBoundedText`, then `parseBoundedJson`. */
export async function readBoundedJson(
  request: Request,
  maxBytes: number,
): Promise<{ readonly ok: true; readonly value: unknown } | Refusal> {
  const read = await readBoundedText(request, maxBytes);
  return read.ok ? parseBoundedJson(read.text) : read;
}

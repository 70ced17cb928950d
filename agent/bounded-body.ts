// Reads a request body as text, streamed and capped, before anything trusts it: the agent host's
// routes are open to whoever can reach them. What a refused body gets answered is the caller's.
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
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > maxBytes) {
    await request.body?.cancel();
    return tooLarge;
  }
  if (request.body === null) return { ok: true, text: "" };
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const chunk = await reader.read();
    if (chunk.done) break;
    total += chunk.value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      return tooLarge;
    }
    chunks.push(chunk.value);
  }
  try {
    return {
      ok: true,
      text: new TextDecoder("utf-8", { fatal: true }).decode(concat(chunks, total)),
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

function concat(chunks: readonly Uint8Array[], total: number): Uint8Array {
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

// Reads a request or response body into memory up to a byte cap, refusing as soon as it passes the
// cap: the one reader behind the Worker's JSON bodies, its runner calls and the kit's resume webhook.

export type CappedRead = { readonly ok: true; readonly bytes: Uint8Array } | { readonly ok: false };

/**
 * The body's bytes, or `{ok: false}` once a declared length or the bytes read pass `maxBytes`.
 * What happens to the rest of an oversized stream is the caller's (`discard`): the Worker drains it
 * to keep the connection usable, the agent host cancels it.
 */
export async function readCapped(
  request: Pick<Request, "headers" | "body">,
  maxBytes: number,
  discard: (reader: ReadableStreamDefaultReader<Uint8Array>, seen: number) => Promise<void>,
): Promise<CappedRead> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (request.body === null) return { ok: true, bytes: new Uint8Array() };
  const reader = request.body.getReader();
  if (declared > maxBytes) {
    await discard(reader, 0);
    return { ok: false };
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const chunk = await reader.read();
    if (chunk.done) break;
    total += chunk.value.byteLength;
    if (total > maxBytes) {
      await discard(reader, total);
      return { ok: false };
    }
    chunks.push(chunk.value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { ok: true, bytes };
}

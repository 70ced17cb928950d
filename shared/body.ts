// Reads a JSON request body once, at the edge: size before parsing, media type, syntax, depth, schema.
// What the handler does with the parsed value is left to it.
import type { Context } from "hono";
import type { z } from "zod";
import { readCapped } from "./capped-read";
import { depthDetail, depthExceededAt } from "./json-depth";
import { loneSurrogateIn } from "./json-unicode";
import { problem } from "./problem";

export const MAX_BODY_BYTES = 2 * 1024 * 1024;
// An oversized body is read to the end (up to this bound) before answering, which keeps the
// connection usable: cancelling it mid-stream made the next request on it fail locally.
const DRAIN_LIMIT_BYTES = 64 * 1024 * 1024;

type BodyRead = { ok: true; bytes: Uint8Array } | { ok: false; response: Response };

async function drain(reader: ReadableStreamDefaultReader<Uint8Array>, seen: number): Promise<void> {
  let total = seen;
  while (total < DRAIN_LIMIT_BYTES) {
    const chunk = await reader.read();
    if (chunk.done) return;
    total += chunk.value.byteLength;
  }
  await reader.cancel();
}

const tooLarge = (): Response =>
  problem("payload_too_large", `request body is larger than ${MAX_BODY_BYTES} bytes`);

export async function readBodyBytes(request: Request): Promise<BodyRead> {
  const read = await readCapped(request, MAX_BODY_BYTES, drain);
  return read.ok ? read : { ok: false, response: tooLarge() };
}

const isJsonType = (type: string): boolean =>
  /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(type);

const UTF8_LABELS = new Set(["utf-8", "utf8"]);

/**
 * The charsets a content type declares that are not UTF-8 (RFC 8259 JSON is UTF-8 only). Reading a
 * body declared as UTF-16 as if it were UTF-8 would store other text than the client sent.
 */
function foreignCharsets(type: string): string[] {
  const foreign: string[] = [];
  for (const parameter of type.split(";").slice(1)) {
    const separator = parameter.indexOf("=");
    const name = parameter.slice(0, separator).trim().toLowerCase();
    // `charset*` is RFC 2231's spelling of the same parameter (e.g. charset*=utf-16''): refused.
    if (separator >= 0 && name === "charset*") {
      foreign.push(parameter.slice(separator + 1).trim() || "(empty)");
      continue;
    }
    if (separator < 0 || name !== "charset") continue;
    const value = parameter
      .slice(separator + 1)
      .trim()
      .replace(/^"(.*)"$/, "$1");
    if (!UTF8_LABELS.has(value.toLowerCase())) foreign.push(value || "(empty)");
  }
  return foreign;
}

/** V8 names a position for most syntax errors; for a truncated body the position is its end. */
function syntaxDetail(error: unknown, text: string): string {
  const message = error instanceof Error ? error.message : String(error);
  const position =
    /position (\d+)/.exec(message)?.[1] ??
    (/end of JSON/i.test(message) ? String(text.length) : null);
  return position === null
    ? `malformed JSON: ${message}`
    : `malformed JSON at position ${position}: ${message}`;
}

/** `whole` names the part an issue without a path is about: the body unless told otherwise. */
export function issuesDetail(
  error: z.ZodError,
  whole = "(body)",
): {
  detail: string;
  errors: { path: string; message: string }[];
} {
  const errors = error.issues.map((issue) => ({
    path: issue.path.length === 0 ? whole : issue.path.map(String).join("."),
    message: issue.message,
  }));
  return { detail: errors.map((entry) => `${entry.path}: ${entry.message}`).join("; "), errors };
}

type Parsed<T> = { ok: true; value: T } | { ok: false; response: Response };

export function validate<S extends z.ZodType>(schema: S, input: unknown): Parsed<z.infer<S>> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return { ok: true, value: parsed.data };
  const { detail, errors } = issuesDetail(parsed.error);
  return { ok: false, response: problem("invalid_request", detail, { errors }) };
}

/**
 * Reads the JSON body at the edge: size, media type, charset, UTF-8, syntax, depth and lone
 * surrogates, each with its own problem. With `optional`, an empty body (any or no content type) stands for `{}`.
 */
export async function readJson(
  c: Context,
  options: { optional?: boolean } = {},
): Promise<Parsed<unknown>> {
  const read = await readBodyBytes(c.req.raw);
  if (!read.ok) return read;
  if (read.bytes.byteLength === 0 && options.optional) return { ok: true, value: {} };
  const type = c.req.header("content-type") ?? "";
  if (!isJsonType(type)) {
    return {
      ok: false,
      response: problem(
        "unsupported_media_type",
        `expected content-type application/json, got ${type || "none"}`,
      ),
    };
  }
  const charsets = foreignCharsets(type);
  if (charsets.length > 0) {
    return {
      ok: false,
      response: problem(
        "unsupported_media_type",
        `JSON bodies are UTF-8; got charset=${charsets.join(", charset=")}`,
      ),
    };
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(read.bytes);
  } catch {
    return { ok: false, response: problem("invalid_request", "request body is not valid UTF-8") };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, response: problem("invalid_request", syntaxDetail(error, text)) };
  }
  // JSON.parse does not recurse, but the schema check and every later copy do.
  const tooDeep = depthExceededAt(text);
  if (tooDeep !== null) {
    return { ok: false, response: problem("invalid_request", depthDetail(tooDeep)) };
  }
  // Refused, not repaired: text stored other than sent would make an identical retry a conflict.
  const lone = loneSurrogateIn(value);
  if (lone !== null) {
    const detail = `${lone.path}: ${lone.message}`;
    return { ok: false, response: problem("invalid_request", detail, { errors: [lone] }) };
  }
  return { ok: true, value };
}

/** Parses and validates the JSON body (see `readJson`; an empty optional body gets the defaults). */
export async function jsonBody<S extends z.ZodType>(
  c: Context,
  schema: S,
  options: { optional?: boolean } = {},
): Promise<Parsed<z.infer<S>>> {
  const read = await readJson(c, options);
  return read.ok ? validate(schema, read.value) : read;
}

// Uploads the parts of a spooled full output that exec-inbox does not hold yet, each streamed from
// the spool file with its SHA-256, retrying what may pass. Journaling each part is the runner's.
import { createReadStream, existsSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { type FullOutputBody, PART_SHA256_HEADER } from "../../shared/full-output";

export type UploadOutcome =
  | { kind: "uploaded" }
  /** The job has a result or is gone (409, 410), or the token is refused: the completion settles it. */
  | { kind: "final"; status: number; code: string }
  /** The spool is gone or does not match what it named: complete without the full output. */
  | { kind: "unusable"; reason: string }
  | { kind: "stopped" };

interface UploadTarget {
  readonly sessionId: string;
  /** The completion URL: each part's URL is beside it. */
  readonly url: string;
  readonly token: string;
  readonly full: FullOutputBody;
  readonly spool: string;
}

interface UploadOptions {
  readonly log: (line: string) => void;
  readonly baseDelayMs?: number;
  readonly maxDelayMs?: number;
  /** After each part: the runner tells exec-inbox the job is still alive. */
  readonly alive?: () => Promise<void>;
}

export const partUrl = (completionUrl: string, index: number): string =>
  completionUrl.replace(/\/completion\/?$/, `/output/parts/${index}`);

const MAX_ANSWER_CHARS = 4096;
const ATTEMPT_TIMEOUT_MS = 300_000;

function problemCode(text: string): string {
  try {
    return (JSON.parse(text) as { code?: string }).code ?? "unknown";
  } catch {
    return "unknown";
  }
}

/** One PUT of bytes `start`… of the spool: node:http, so the body streams with its Content-Length. */
function putPart(
  url: string,
  token: string,
  spool: string,
  start: number,
  part: { bytes: number; sha256: string },
  signal: AbortSignal,
): Promise<{ status: number; code: string }> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const send = target.protocol === "https:" ? httpsRequest : httpRequest;
    const request = send(target, {
      method: "PUT",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/octet-stream",
        "content-length": String(part.bytes),
        [PART_SHA256_HEADER]: part.sha256,
      },
      signal: AbortSignal.any([signal, AbortSignal.timeout(ATTEMPT_TIMEOUT_MS)]),
    });
    request.on("response", (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        if (text.length < MAX_ANSWER_CHARS) text += chunk;
      });
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, code: problemCode(text) }),
      );
      response.on("error", reject);
    });
    request.on("error", reject);
    const body = createReadStream(spool, { start, end: start + part.bytes - 1 });
    body.on("error", (error) => {
      request.destroy(error);
      reject(Object.assign(error, { spool: true }));
    });
    body.pipe(request);
  });
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });

/** Uploads every part not in `uploaded`, in order; `onUploaded` runs after each one exec-inbox took. */
export async function uploadParts(
  target: UploadTarget,
  uploaded: ReadonlySet<number>,
  onUploaded: (index: number) => void,
  options: UploadOptions,
  signal: AbortSignal,
): Promise<UploadOutcome> {
  const say = (line: string) => options.log(`output ${target.sessionId}: ${line}`);
  if (!existsSync(target.spool)) return { kind: "unusable", reason: "the spool is gone" };
  let start = 0;
  for (const [index, part] of target.full.parts.entries()) {
    const offset = start;
    start += part.bytes;
    if (uploaded.has(index)) continue;
    for (let attempt = 1; ; attempt += 1) {
      if (signal.aborted) return { kind: "stopped" };
      const delay =
        Math.min(options.maxDelayMs ?? 30_000, (options.baseDelayMs ?? 500) * 2 ** (attempt - 1)) *
        (0.5 + Math.random() / 2);
      try {
        const answer = await putPart(
          partUrl(target.url, index),
          target.token,
          target.spool,
          offset,
          part,
          signal,
        );
        if (answer.status === 201) {
          onUploaded(index);
          say(`part ${index} uploaded`);
          break;
        }
        if (answer.status === 422 && answer.code === "digest_mismatch") {
          return { kind: "unusable", reason: `part ${index} does not match its hash` };
        }
        if (answer.status === 429 || answer.status >= 500) {
          say(
            `part ${index}: ${answer.status} ${answer.code}, retry ${attempt} in ${Math.round(delay)} ms`,
          );
        } else {
          say(`part ${index}: ${answer.status} ${answer.code}; not retrying`);
          return { kind: "final", status: answer.status, code: answer.code };
        }
      } catch (error) {
        if (signal.aborted) return { kind: "stopped" };
        if ((error as { spool?: boolean }).spool === true) {
          return {
            kind: "unusable",
            reason: `the spool cannot be read (${(error as Error).name})`,
          };
        }
        say(`part ${index}: ${(error as Error).name}, retry ${attempt} in ${Math.round(delay)} ms`);
      }
      await sleep(delay, signal);
    }
    await options.alive?.().catch(() => undefined);
  }
  say(`${target.full.parts.length} part(s), ${target.full.bytes} bytes uploaded`);
  return { kind: "uploaded" };
}

// Calls a session's runner over the reference runner's HTTP API (docs/runner.md), each call bounded
// in time and in answer size, every failure a value: what a tool tells the model about it is left
// to the tool. The runner's token goes only into the Authorization header of these calls.

import { z } from "zod";
import { readCapped } from "../../shared/capped-read";
import { outputBudget } from "../../shared/output-budget";
import { MAX_OUTPUT_TOKENS } from "./tool-inputs";

/**
 * The most of a runner's answer read: the output of the largest max_output_tokens a tool takes,
 * JSON-escaped at its worst (a control byte becomes six: `\u0000`), with room for the rest.
 */
export const RUNNER_ANSWER_MAX_BYTES = outputBudget(MAX_OUTPUT_TOKENS) * 6 + 64 * 1024;

/** How long a call may take beyond the yield the runner waits by design. */
export const RUNNER_CALL_MARGIN_MS = 10_000;

/** The runner's tool answer: `exit_code` (a number, or null when a limit ended it) once exited. */
const execAnswerSchema = z.object({
  session_id: z.string().min(1).max(128).optional(),
  exit_code: z.int().nullable().optional(),
  output: z.string(),
  output_bytes_total: z.int().min(0).optional(),
  output_bytes_dropped: z.int().min(0).optional(),
  ended_by: z.string().max(64).optional(),
  /** Once exited, from the reference runner: completed, failed or killed, as its completion says. */
  status: z.string().max(32).optional(),
  /** Once ended by a signal: its name (e.g. SIGKILL). */
  signal: z.string().max(32).optional(),
  killed: z.boolean().optional(),
});

export type ExecAnswer = z.infer<typeof execAnswerSchema>;

/** Why a call gave no answer the service can use; `detail` never carries the token or a body. */
export interface RunnerFailure {
  readonly ok: false;
  readonly reason: "unreachable" | "timeout" | "too_large" | "garbage" | "refused";
  /** The runner's HTTP status when it answered one. */
  readonly status: number | null;
  /** The runner's own problem code (e.g. `not_found`, `too_many_processes`) when it gave one. */
  readonly code: string | null;
  readonly detail: string;
}

export type RunnerResult<T> = { readonly ok: true; readonly value: T } | RunnerFailure;

/** `fetch`, or a stand-in with its shape (the tests' service binding). */
export type RunnerFetch = (request: Request) => Promise<Response>;

export interface RunnerTarget {
  readonly url: string;
  readonly token: string;
}

const failure = (
  reason: RunnerFailure["reason"],
  detail: string,
  status: number | null = null,
  code: string | null = null,
): RunnerFailure => ({ ok: false, reason, status, code, detail });

const problemCode = z.object({ code: z.string().max(64) });

export class RunnerClient {
  private readonly base: string;
  private readonly send: RunnerFetch;

  constructor(
    private readonly target: RunnerTarget,
    send: RunnerFetch = fetch,
    private readonly marginMs: number = RUNNER_CALL_MARGIN_MS,
  ) {
    this.base = target.url.replace(/\/+$/, "");
    // Called bare: the global fetch throws when called as a method of another object.
    this.send = (request) => send(request);
  }

  execCommand(input: {
    cmd: string;
    workspace: string;
    workdir?: string | undefined;
    yield_time_ms?: number | undefined;
    max_output_tokens?: number | undefined;
  }): Promise<RunnerResult<ExecAnswer>> {
    return this.post("/v1/exec_command", input, input.yield_time_ms ?? 10_000, execAnswerSchema);
  }

  writeStdin(input: {
    session_id: string;
    chars?: string | undefined;
    yield_time_ms?: number | undefined;
    max_output_tokens?: number | undefined;
  }): Promise<RunnerResult<ExecAnswer>> {
    return this.post("/v1/write_stdin", input, input.yield_time_ms ?? 250, execAnswerSchema);
  }

  /** `callback` is the reservation's, passed whole: its heartbeat fields reach the runner too. */
  armCallback(
    handle: string,
    callback: {
      url: string;
      token: string;
      heartbeat_url?: string | null;
      heartbeat_timeout_ms?: number | null;
    },
  ): Promise<RunnerResult<unknown>> {
    return this.post(
      `/v1/processes/${encodeURIComponent(handle)}/callback`,
      callback,
      0,
      z.unknown(),
    );
  }

  kill(handle: string): Promise<RunnerResult<ExecAnswer>> {
    return this.post(`/v1/processes/${encodeURIComponent(handle)}/kill`, {}, 0, execAnswerSchema);
  }

  private async post<T>(
    path: string,
    body: unknown,
    yieldMs: number,
    schema: z.ZodType<T>,
  ): Promise<RunnerResult<T>> {
    const timeoutMs = Math.max(0, yieldMs) + this.marginMs;
    // One signal bounds the whole call: connecting, waiting, and reading the answer's body.
    const signal = AbortSignal.timeout(timeoutMs);
    let response: Response;
    try {
      response = await this.send(
        new Request(`${this.base}${path}`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${this.target.token}`,
            "content-type": "application/json",
          },
          body: JSON.stringify(body),
          // A redirect could lead past the allowlist: a 3xx is an answer, never followed.
          redirect: "manual",
          signal,
        }),
      );
    } catch {
      return signal.aborted
        ? failure("timeout", `the runner did not answer within ${timeoutMs} ms`)
        : failure("unreachable", "the runner could not be reached");
    }
    let text: string;
    try {
      const read = await readCapped(response, RUNNER_ANSWER_MAX_BYTES, (reader) => reader.cancel());
      if (!read.ok) {
        return failure(
          "too_large",
          `the runner's answer is over ${RUNNER_ANSWER_MAX_BYTES} bytes`,
          response.status,
        );
      }
      text = new TextDecoder().decode(read.bytes);
    } catch {
      return signal.aborted
        ? failure("timeout", `the runner did not finish its answer within ${timeoutMs} ms`)
        : failure("unreachable", "the runner's answer broke off", response.status);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return failure(
        "garbage",
        `the runner answered ${response.status} without JSON`,
        response.status,
      );
    }
    if (!response.ok) {
      const code = problemCode.safeParse(parsed);
      return failure(
        "refused",
        `the runner refused the call with ${response.status}`,
        response.status,
        code.success ? code.data.code : null,
      );
    }
    const shaped = schema.safeParse(parsed);
    return shaped.success
      ? { ok: true, value: shaped.data }
      : failure(
          "garbage",
          "the runner's answer is not the shape its API documents",
          response.status,
        );
  }
}

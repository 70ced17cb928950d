// Calls to the exec runner's model-facing API (the Codex unified-exec shapes) and its callback
// arming. Knows nothing of exec-inbox; the tools combine the two.

export interface ExecCommandInput {
  readonly cmd: string;
  /** The agent session whose workspace (RUNNER_WORK_ROOT/<id>) the command runs in. */
  readonly workspace?: string | undefined;
  readonly workdir?: string | undefined;
  readonly yield_time_ms?: number | undefined;
  readonly max_output_tokens?: number | undefined;
}

export interface WriteStdinInput {
  readonly session_id: string;
  readonly chars?: string | undefined;
  readonly yield_time_ms?: number | undefined;
  readonly max_output_tokens?: number | undefined;
}

/** The runner's answer: `exit_code` once the command exited, else `session_id` of the live one. */
export interface ExecAnswer {
  readonly session_id?: string;
  readonly exit_code?: number | null;
  readonly output: string;
  readonly wall_time_ms?: number;
  readonly output_bytes_total?: number;
  readonly output_bytes_dropped?: number;
  /** Once exited, from the reference runner: as its completion says (completed, failed, killed). */
  readonly status?: string;
  /** Once exited: who ended it, as the completion's `ended_by`. */
  readonly ended_by?: string;
  /** Once exited by a signal: its name (e.g. SIGKILL). */
  readonly signal?: string;
}

export class RunnerError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
  ) {
    super(`runner ${status} ${code}: ${detail}`);
    this.name = "RunnerError";
  }
}

export class RunnerClient {
  private readonly base: string;

  constructor(
    private readonly options: {
      baseUrl: string;
      token: string;
      /** The fetch that reaches the runner (default: the global one), e.g. a service binding's. */
      fetch?: (request: Request) => Promise<Response>;
    },
  ) {
    this.base = options.baseUrl.replace(/\/+$/, "");
  }

  private async post<T>(path: string, body: unknown): Promise<T> {
    const request = new Request(`${this.base}${path}`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${this.options.token}`,
        "content-type": "application/json",
      },
      body: JSON.stringify(body),
    });
    const response = await (this.options.fetch ?? fetch)(request);
    const text = await response.text();
    let parsed: Record<string, unknown> = {};
    try {
      parsed = text === "" ? {} : JSON.parse(text);
    } catch {
      // A proxy's error page: described by status and text below.
    }
    if (!response.ok) {
      throw new RunnerError(
        response.status,
        String(parsed.code ?? "unknown"),
        String(parsed.detail ?? text),
      );
    }
    return parsed as T;
  }

  execCommand(input: ExecCommandInput): Promise<ExecAnswer> {
    return this.post("/v1/exec_command", input);
  }

  writeStdin(input: WriteStdinInput): Promise<ExecAnswer> {
    return this.post("/v1/write_stdin", input);
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
  ): Promise<unknown> {
    return this.post(`/v1/processes/${encodeURIComponent(handle)}/callback`, callback);
  }

  /** Ends the process's whole group (a command nobody would otherwise watch). */
  kill(handle: string): Promise<ExecAnswer & { killed?: boolean }> {
    return this.post(`/v1/processes/${encodeURIComponent(handle)}/kill`, {});
  }
}

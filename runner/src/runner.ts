// The reference exec runner: the process table, the callback journal and the sender, wired together,
// and the pruning of exited processes. HTTP is left to server.ts; processes to process-table.ts.

import { readdirSync } from "node:fs";
import { join } from "node:path";
import { type SendOutcome, sendCompletion } from "./callback-sender";
import { childEnvironment } from "./child-env";
import { type CompletionBody, completionFor, lostCompletion } from "./completion";
import { Heartbeats, type Liveness } from "./heartbeats";
import { Journal, type PendingCallback } from "./journal";
import { embeddedPlan, type LaunchPlan } from "./launch";
import {
  DEFAULT_MAX_FULL_OUTPUT_BYTES,
  DEFAULT_PART_BYTES,
  removeSpool,
  spoolPath,
} from "./output-spool";
import { uploadParts } from "./part-uploader";
import { type ManagedProcess, ProcessTable } from "./process-table";

interface RunnerOptions {
  readonly stateDir: string;
  readonly log?: (line: string) => void;
  readonly baseDelayMs?: number;
  readonly maxDelayMs?: number;
  /** The commands' environment (default: the allow-list of child-env.ts). */
  readonly childEnv?: Record<string, string>;
  readonly killGraceMs?: number;
  /** An exited process is forgotten this long after nothing is owed for it (default 1 h). */
  readonly retentionMs?: number;
  readonly callbackGiveUpMs?: number;
  /** Sandbox, limits and cgroups of every command (default: the process table's). */
  readonly launch?: Omit<LaunchPlan, "env">;
  /** First retry of a failed heartbeat (default 1 s). */
  readonly heartbeatRetryBaseMs?: number;
  /** RUNNER_MAX_FULL_OUTPUT_BYTES: past this a command's whole output is not kept (default 1 GiB). */
  readonly maxFullOutputBytes?: number;
  /** The size of an uploaded part of a full output (default 16 MiB). */
  readonly partBytes?: number;
}

interface Armed {
  readonly url: string;
  readonly token: string;
  /** The job's heartbeat timeout: its completion is retried at least every third of it. */
  readonly timeoutMs: number | null;
}

export class Runner {
  readonly table: ProcessTable;
  private readonly journal: Journal;
  private readonly heartbeats: Heartbeats;
  private readonly armed = new Map<string, Armed>();
  private readonly inFlight = new Map<string, Promise<SendOutcome>>();
  /** When each armed process's callback was settled (delivered, refused or abandoned). */
  private readonly settledAt = new Map<string, number>();
  private readonly stopping = new AbortController();
  private readonly sweeper: NodeJS.Timeout;
  private readonly retentionMs: number;
  private shuttingDown = false;
  private readonly log: (line: string) => void;

  constructor(private readonly options: RunnerOptions) {
    this.log = options.log ?? ((line) => console.log(`[runner] ${line}`));
    this.journal = new Journal(options.stateDir, this.log);
    this.table = new ProcessTable({
      nextId: () => this.journal.nextSessionId(),
      env: options.childEnv ?? childEnvironment(process.env),
      killGraceMs: options.killGraceMs,
      launch: options.launch ?? embeddedPlan(options.stateDir),
      spool: {
        dir: options.stateDir,
        maxBytes: options.maxFullOutputBytes ?? DEFAULT_MAX_FULL_OUTPUT_BYTES,
        partBytes: options.partBytes ?? DEFAULT_PART_BYTES,
      },
    });
    if (options.launch === undefined && !this.table.sandboxed) {
      this.log("warning: bwrap does not work here; commands run WITHOUT a sandbox");
    }
    this.table.onExit((process) => this.processEnded(process));
    this.sweepSpools();
    this.heartbeats = new Heartbeats({
      log: this.log,
      processOf: (sessionId) => (this.table.has(sessionId) ? this.table.get(sessionId) : undefined),
      // The service asked (contract §9): the same end as the kill route's, so `kill_request`.
      cancel: (sessionId) => {
        if (this.table.has(sessionId)) this.table.kill(sessionId);
      },
      retryBaseMs: options.heartbeatRetryBaseMs,
    });
    this.retentionMs = options.retentionMs ?? 3_600_000;
    const every = Math.min(60_000, Math.max(100, Math.floor(this.retentionMs / 4)));
    this.sweeper = setInterval(() => this.prune(Date.now()), every);
    this.sweeper.unref();
  }

  /**
   * Before any command of this run starts: a spool whose callback the journal no longer owes (a
   * command never armed, or one settled before a crash removed it) is deleted, else it stays for ever.
   */
  private sweepSpools(): void {
    const dir = join(this.options.stateDir, "outputs");
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return; // No spool directory yet.
    }
    const owed = new Set(this.journal.pending().map((pending) => `${pending.sessionId}.out`));
    for (const name of names) {
      if (owed.has(name)) continue;
      this.log(`removing the spool ${name}: no callback is owed for it`);
      removeSpool(join(dir, name));
    }
  }

  /** Resends what the journal says is still owed; processes that died with the runner are `lost`. */
  recover(): void {
    for (const pending of this.journal.pending()) {
      if (this.table.has(pending.sessionId)) continue;
      const body = pending.body ?? this.recordResult(pending.sessionId, lostCompletion());
      this.log(`recovering callback ${pending.sessionId} (${body.status})`);
      // Its parts may take a while: the job is heartbeated until its completion starts.
      if (body.full_output !== undefined) {
        this.heartbeats.start(pending.sessionId, pending.url, pending.token, {
          ...(pending.heartbeat_url === undefined ? {} : { heartbeat_url: pending.heartbeat_url }),
          heartbeat_timeout_ms: pending.heartbeat_timeout_ms,
        });
      }
      this.dispatch(
        { ...pending, since: pending.body === null ? Date.now() : pending.since },
        body,
        // A recovered result is as much in a hurry as a fresh one: its job still has a timeout.
        pending.heartbeat_timeout_ms ?? null,
      );
    }
  }

  /**
   * Arms the completion callback of a process and heartbeats it while it runs; one that already
   * ended is reported at once.
   */
  arm(sessionId: string, url: string, token: string, liveness: Liveness = {}): void {
    const process = this.table.get(sessionId);
    if (!this.armed.has(sessionId)) {
      this.journal.append({
        type: "armed",
        session_id: sessionId,
        url,
        token,
        command: process.command,
        at: Date.now(),
        ...liveness,
      });
      this.armed.set(sessionId, { url, token, timeoutMs: liveness.heartbeat_timeout_ms ?? null });
      if (process.exit === null) this.heartbeats.start(sessionId, url, token, liveness);
    }
    if (process.exit !== null) this.report(process);
  }

  /**
   * Forgets exited processes `retentionMs` after the later of their exit and the settling of their
   * callback. One whose completion is armed but unsettled is kept: it may still be pulled.
   */
  prune(now: number): void {
    for (const process of this.table.all()) {
      if (process.endedAt === null) continue;
      const armed = this.armed.has(process.sessionId);
      const settled = this.settledAt.get(process.sessionId);
      if (armed && settled === undefined) continue;
      if (now - Math.max(process.endedAt, settled ?? 0) < this.retentionMs) continue;
      this.table.remove(process.sessionId);
      this.armed.delete(process.sessionId);
      this.settledAt.delete(process.sessionId);
      this.inFlight.delete(process.sessionId);
    }
  }

  private recordResult(sessionId: string, body: CompletionBody): CompletionBody {
    this.journal.append({ type: "result", session_id: sessionId, body, at: Date.now() });
    return body;
  }

  private processEnded(process: ManagedProcess): void {
    // Let a poll that is waiting on this exit answer first, so `observed` says whether it did.
    setImmediate(() => this.report(process));
  }

  private report(process: ManagedProcess): void {
    const armed = this.armed.get(process.sessionId);
    if (armed === undefined || this.inFlight.has(process.sessionId)) {
      this.heartbeats.stop(process.sessionId);
      return;
    }
    const body = this.recordResult(process.sessionId, completionFor(process, this.shuttingDown));
    // Heartbeats go on while the parts upload (contract §9: every third of the timeout); they stop
    // when the completion POST starts (uploadThenSend), none may follow it.
    if (body.full_output === undefined) this.heartbeats.stop(process.sessionId);
    // The completion carries the whole output: the spool is not needed.
    if (body.full_output === undefined)
      removeSpool(spoolPath(this.options.stateDir, process.sessionId));
    this.dispatch(
      {
        sessionId: process.sessionId,
        url: armed.url,
        token: armed.token,
        command: process.command,
        body,
        since: Date.now(),
      },
      body,
      armed.timeoutMs,
    );
  }

  /**
   * Sends a result until it settles. While it is retried no heartbeat goes (none may follow a
   * completion), so a job with a heartbeat timeout is retried at least every third of it: after
   * a restart of exec-inbox its one grace of a timeout must see the result arrive.
   */
  private dispatch(
    target: PendingCallback,
    body: CompletionBody,
    timeoutMs: number | null = null,
  ): void {
    const sending = this.uploadThenSend(target, body, timeoutMs).then((outcome) => {
      if (outcome.kind === "stopped") return outcome;
      // Parked before `done` is journaled: a crash between the two resends rather than loses it.
      if (outcome.kind === "abandoned") {
        this.journal.deadLetter(target, outcome.body, `${outcome.status} ${outcome.code}`);
      }
      this.journal.append({
        type: "done",
        session_id: target.sessionId,
        outcome: outcome.kind,
        status: outcome.status,
        at: Date.now(),
      });
      this.settledAt.set(target.sessionId, Date.now());
      removeSpool(spoolPath(this.options.stateDir, target.sessionId));
      return outcome;
    });
    this.inFlight.set(target.sessionId, sending);
  }

  /**
   * A result with a full output: its parts go first (each journaled, so a restart sends only the
   * rest), then the completion that names them. When exec-inbox answers that parts are missing,
   * all are sent again; a spool that is gone or spoiled leaves the completion without one.
   */
  private async uploadThenSend(
    target: PendingCallback,
    body: CompletionBody,
    timeoutMs: number | null,
  ): Promise<SendOutcome> {
    let current = body;
    let uploaded = new Set(target.uploadedParts ?? []);
    const cap = this.options.maxDelayMs ?? 30_000;
    const withoutFull = (reason: string): CompletionBody => {
      this.log(`output ${target.sessionId}: ${reason}; completing without it`);
      const { full_output: _dropped, ...rest } = current;
      return rest;
    };
    for (let round = 1; ; round += 1) {
      const full = current.full_output;
      if (full !== undefined) {
        const outcome = await uploadParts(
          { ...target, full, spool: spoolPath(this.options.stateDir, target.sessionId) },
          uploaded,
          (index) =>
            this.journal.append({
              type: "part",
              session_id: target.sessionId,
              index,
              at: Date.now(),
            }),
          {
            log: this.log,
            baseDelayMs: this.options.baseDelayMs,
            // Like the completion's retries: a job with a timeout is not left waiting past a third.
            maxDelayMs: timeoutMs === null ? cap : Math.min(cap, Math.floor(timeoutMs / 3)),
            alive: () => this.stillAlive(target),
          },
          this.stopping.signal,
        );
        if (outcome.kind === "stopped") return { kind: "stopped" };
        if (outcome.kind === "unusable") current = withoutFull(outcome.reason);
        // A part refused for good (413 over the job's upload tally, 401, 404, 409…): the inline
        // head and tail are still the result, and the completion settles whatever else holds.
        if (outcome.kind === "final") {
          current = withoutFull(`a part was refused (${outcome.status} ${outcome.code})`);
        }
      }
      // The completion starts: no heartbeat of this job may follow it.
      this.heartbeats.stop(target.sessionId);
      const sent = await this.send(target, current, timeoutMs);
      if (sent.kind !== "refused" || sent.code !== "output_incomplete") return sent;
      if (current.full_output === undefined) return sent;
      if (round >= 3) {
        // The parts never got there: the definite result goes without its full output.
        current = withoutFull(`parts still missing after ${round} rounds`);
        continue;
      }
      this.journal.append({ type: "parts_reset", session_id: target.sessionId, at: Date.now() });
      uploaded = new Set();
    }
  }

  private send(target: PendingCallback, body: CompletionBody, timeoutMs: number | null) {
    const cap = this.options.maxDelayMs ?? 30_000;
    return sendCompletion(
      { ...target, body },
      {
        log: this.log,
        baseDelayMs: this.options.baseDelayMs,
        maxDelayMs: timeoutMs === null ? cap : Math.min(cap, Math.floor(timeoutMs / 3)),
        // An attempt stuck on a half-open connection would outlast the timeout as surely.
        ...(timeoutMs === null ? {} : { attemptTimeoutMs: Math.floor(timeoutMs / 3) }),
        giveUpMs: this.options.callbackGiveUpMs,
      },
      this.stopping.signal,
    );
  }

  /** Between parts: one heartbeat, so a long upload does not make the job look silent. */
  private async stillAlive(target: PendingCallback): Promise<void> {
    const url = target.url.replace(/\/completion\/?$/, "/heartbeat");
    const response = await fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${target.token}`, "content-type": "application/json" },
      body: "{}",
      signal: AbortSignal.timeout(10_000),
    });
    await response.body?.cancel();
  }

  /** Settles when every callback started so far has been delivered, refused or stopped. */
  async idle(): Promise<void> {
    await Promise.all(this.inFlight.values());
  }

  /** Ends every live group, gives owed callbacks `graceMs`, then leaves the rest to the journal. */
  async close(graceMs = 5000): Promise<void> {
    this.shuttingDown = true;
    clearInterval(this.sweeper);
    await this.table.shutdown();
    this.heartbeats.stopAll();
    await new Promise((resolve) => setImmediate(resolve));
    await Promise.race([this.idle(), new Promise((resolve) => setTimeout(resolve, graceMs))]);
    this.stopping.abort();
    await this.idle();
  }
}

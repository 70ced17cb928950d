// The reference exec runner: the process table, the callback journal and the sender, wired together.
// HTTP is left to server.ts; process management to process-table.ts.
import {
  type CompletionBody,
  completionFor,
  lostCompletion,
  type SendOutcome,
  sendCompletion,
} from "./completion";
import { Journal, type PendingCallback } from "./journal";
import { type ManagedProcess, ProcessTable } from "./process-table";

export interface RunnerOptions {
  readonly stateDir: string;
  readonly log?: (line: string) => void;
  readonly baseDelayMs?: number;
  readonly maxDelayMs?: number;
}

interface Armed {
  readonly url: string;
  readonly token: string;
}

export class Runner {
  readonly table: ProcessTable;
  private readonly journal: Journal;
  private readonly armed = new Map<string, Armed>();
  private readonly inFlight = new Map<string, Promise<SendOutcome>>();
  private readonly stopping = new AbortController();
  private shuttingDown = false;
  private readonly log: (line: string) => void;

  constructor(private readonly options: RunnerOptions) {
    this.log = options.log ?? ((line) => console.log(`[runner] ${line}`));
    this.journal = new Journal(options.stateDir);
    this.table = new ProcessTable(this.journal.highestSessionId());
    this.table.onExit((process) => this.processEnded(process));
  }

  /** Resends what the journal says is still owed; processes that died with the runner are `lost`. */
  recover(): void {
    for (const pending of this.journal.pending()) {
      if (this.table.has(pending.sessionId)) continue;
      const body = pending.body ?? this.recordResult(pending.sessionId, lostCompletion());
      this.log(`recovering callback ${pending.sessionId} (${body.status})`);
      this.dispatch(pending, body);
    }
  }

  /** Arms the completion callback of a process; one that already ended is reported at once. */
  arm(sessionId: string, url: string, token: string): void {
    const process = this.table.get(sessionId);
    if (!this.armed.has(sessionId)) {
      this.journal.append({
        type: "armed",
        session_id: sessionId,
        url,
        token,
        command: process.command,
        at: Date.now(),
      });
      this.armed.set(sessionId, { url, token });
    }
    if (process.exit !== null) this.report(process);
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
    if (armed === undefined || this.inFlight.has(process.sessionId)) return;
    const body = this.recordResult(process.sessionId, completionFor(process, this.shuttingDown));
    this.dispatch(
      {
        sessionId: process.sessionId,
        url: armed.url,
        token: armed.token,
        command: process.command,
        body,
      },
      body,
    );
  }

  private dispatch(target: PendingCallback, body: CompletionBody): void {
    const sending = sendCompletion(
      { sessionId: target.sessionId, url: target.url, token: target.token, body },
      { log: this.log, baseDelayMs: this.options.baseDelayMs, maxDelayMs: this.options.maxDelayMs },
      this.stopping.signal,
    ).then((outcome) => {
      if (outcome.kind !== "stopped") {
        this.journal.append({
          type: "done",
          session_id: target.sessionId,
          outcome: outcome.kind,
          status: outcome.status,
          at: Date.now(),
        });
      }
      return outcome;
    });
    this.inFlight.set(target.sessionId, sending);
  }

  /** Settles when every callback started so far has been delivered, refused or stopped. */
  async idle(): Promise<void> {
    await Promise.all(this.inFlight.values());
  }

  async close(graceMs = 5000): Promise<void> {
    this.shuttingDown = true;
    await this.table.shutdown();
    await new Promise((resolve) => setImmediate(resolve));
    await Promise.race([this.idle(), new Promise((resolve) => setTimeout(resolve, graceMs))]);
    // Whatever is still unsent stays in the journal for the next start.
    this.stopping.abort();
    await this.idle();
  }
}

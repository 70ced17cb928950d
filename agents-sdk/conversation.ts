// The agent's conversation and inbox bookkeeping in its own SQLite: the model messages, the
// envelope ids already applied, the handles still running and the run being driven. Each write is
// one transaction, so a message and the id that says it was applied never part. Calling the model
// and exec-inbox is left to exec-inbox-agent.ts.
import type { JournaledCall } from "@exec-inbox/ai-sdk/recover-tool-calls";
import type { ModelMessage } from "ai";

/** The run this agent drives in exec-inbox, kept so a restarted object can finish it. */
export interface ActiveRun {
  readonly runId: string;
  /** The resume it took, or null for a human message. */
  readonly resumeId: string | null;
  /**
   * False while a human message's run id is stored but its registration is unconfirmed (the
   * answer may have been lost): the next prompt registers the same id again. Absent: registered.
   */
  readonly registered?: boolean;
}

/** The small state row (persisted as JSON columns: evolve by adding optional fields). */
export interface ConversationState {
  /** The exec-inbox lifetime this conversation belongs to; null until the first run. */
  readonly lifetime: string | null;
  /** Background handles the model started and has not yet seen end. */
  readonly running: readonly string[];
  readonly activeRun: ActiveRun | null;
  /** Messages were added since the model last answered: a turn is owed (also after a crash). */
  readonly turnOwed: boolean;
}

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS exec_inbox_messages (seq INTEGER PRIMARY KEY, message TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS exec_inbox_applied (envelope_id TEXT PRIMARY KEY);
  CREATE TABLE IF NOT EXISTS exec_inbox_resumes (resume_id TEXT PRIMARY KEY);
  -- Journaled calls of the turn under way (JournaledCall as JSON), written before the runner is
  -- asked and emptied when the turn is stored: what a restarted object recovers, never reruns.
  -- Two calls under one id (a model that reuses ids) are two rows: the newest is the one written.
  CREATE TABLE IF NOT EXISTS exec_inbox_tool_calls (
    seq INTEGER PRIMARY KEY,
    tool_call_id TEXT NOT NULL,
    call TEXT NOT NULL
  );
  -- The runner's handle of each background call of the stored turns (the newest 1024): a call
  -- whose result a compaction dropped is matched to its job (an id with two handles to neither).
  CREATE TABLE IF NOT EXISTS exec_inbox_call_handles (
    seq INTEGER PRIMARY KEY,
    tool_call_id TEXT NOT NULL,
    handle TEXT NOT NULL
  );
  CREATE TABLE IF NOT EXISTS exec_inbox_state (
    singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
    lifetime TEXT,
    running TEXT NOT NULL,
    active_run TEXT,
    turn_owed INTEGER NOT NULL CHECK (turn_owed IN (0, 1))
  );
`;

type StateRow = {
  lifetime: string | null;
  running: string;
  active_run: string | null;
  turn_owed: number;
};

/** Handles of stored calls kept for recovery after a compaction. */
const KEEP_CALL_HANDLES = 1024;

const EMPTY: ConversationState = { lifetime: null, running: [], activeRun: null, turnOwed: false };

export class Conversation {
  constructor(private readonly storage: DurableObjectStorage) {
    storage.sql.exec(SCHEMA);
  }

  private get sql(): SqlStorage {
    return this.storage.sql;
  }

  state(): ConversationState {
    const row = this.sql.exec<StateRow>("SELECT * FROM exec_inbox_state").toArray()[0];
    if (row === undefined) return EMPTY;
    return {
      lifetime: row.lifetime,
      running: JSON.parse(row.running),
      activeRun: row.active_run === null ? null : JSON.parse(row.active_run),
      turnOwed: row.turn_owed === 1,
    };
  }

  messages(): ModelMessage[] {
    return this.sql
      .exec<{ message: string }>("SELECT message FROM exec_inbox_messages ORDER BY seq")
      .toArray()
      .map((row) => JSON.parse(row.message));
  }

  /** Which of these envelope ids are in the conversation already. */
  applied(ids: readonly string[]): Set<string> {
    const found = new Set<string>();
    for (const id of ids) {
      const row = this.sql
        .exec("SELECT 1 FROM exec_inbox_applied WHERE envelope_id = ?", id)
        .toArray();
      if (row.length > 0) found.add(id);
    }
    return found;
  }

  /** The journaled exec_command calls of a turn not yet stored, in the order they were made. */
  journal(): JournaledCall[] {
    return this.sql
      .exec<{ call: string }>("SELECT call FROM exec_inbox_tool_calls ORDER BY seq")
      .toArray()
      .map((row) => JSON.parse(row.call));
  }

  /** Adds a journaled call: a new row, even under an id journaled already. */
  journalAdd(call: JournaledCall): void {
    this.sql.exec(
      "INSERT INTO exec_inbox_tool_calls (tool_call_id, call) VALUES (?, ?)",
      call.toolCallId,
      JSON.stringify(call),
    );
  }

  /** The newest journaled call of its id, in its next form. */
  journalUpdate(call: JournaledCall): void {
    this.sql.exec(
      `UPDATE exec_inbox_tool_calls SET call = ? WHERE seq =
         (SELECT MAX(seq) FROM exec_inbox_tool_calls WHERE tool_call_id = ?)`,
      JSON.stringify(call),
      call.toolCallId,
    );
  }

  /** The handles kept of the stored turns' background calls, oldest first. */
  callHandles(): Array<{ toolCallId: string; handle: string }> {
    return this.sql
      .exec<{ tool_call_id: string; handle: string }>(
        "SELECT tool_call_id, handle FROM exec_inbox_call_handles ORDER BY seq",
      )
      .toArray()
      .map((row) => ({ toolCallId: row.tool_call_id, handle: row.handle }));
  }

  hasSeenResume(resumeId: string): boolean {
    return (
      this.sql.exec("SELECT 1 FROM exec_inbox_resumes WHERE resume_id = ?", resumeId).toArray()
        .length > 0
    );
  }

  /**
   * One transaction: messages appended, envelope ids marked applied, resume ids remembered, the
   * state row replaced. A crash leaves all of it or none.
   */
  commit(change: {
    state: ConversationState;
    messages?: readonly ModelMessage[];
    applied?: readonly string[];
    resumeId?: string;
    /** The messages hold every journaled call with its result: the journal is emptied. */
    journalDone?: boolean;
    /** `messages` replace the conversation (a compacted one that recovery closed). */
    replace?: boolean;
  }): void {
    this.storage.transactionSync(() => {
      if (change.replace === true) this.sql.exec("DELETE FROM exec_inbox_messages");
      if (change.journalDone === true) {
        this.sql.exec(
          `INSERT INTO exec_inbox_call_handles (tool_call_id, handle)
           SELECT tool_call_id, json_extract(call, '$.handle') FROM exec_inbox_tool_calls
           WHERE json_extract(call, '$.handle') IS NOT NULL ORDER BY seq`,
        );
        this.sql.exec(
          `DELETE FROM exec_inbox_call_handles
           WHERE seq <= (SELECT MAX(seq) FROM exec_inbox_call_handles) - ?`,
          KEEP_CALL_HANDLES,
        );
        this.sql.exec("DELETE FROM exec_inbox_tool_calls");
      }
      for (const message of change.messages ?? []) {
        this.sql.exec(
          "INSERT INTO exec_inbox_messages (message) VALUES (?)",
          JSON.stringify(message),
        );
      }
      for (const id of change.applied ?? []) {
        this.sql.exec("INSERT OR IGNORE INTO exec_inbox_applied (envelope_id) VALUES (?)", id);
      }
      if (change.resumeId !== undefined) {
        this.sql.exec(
          "INSERT OR IGNORE INTO exec_inbox_resumes (resume_id) VALUES (?)",
          change.resumeId,
        );
      }
      const { state } = change;
      this.sql.exec(
        `INSERT OR REPLACE INTO exec_inbox_state (singleton, lifetime, running, active_run, turn_owed)
         VALUES (1, ?, ?, ?, ?)`,
        state.lifetime,
        JSON.stringify(state.running),
        state.activeRun === null ? null : JSON.stringify(state.activeRun),
        state.turnOwed ? 1 : 0,
      );
    });
  }

  /** A new exec-inbox lifetime (the session was deleted and created again): start afresh. */
  reset(lifetime: string): void {
    this.storage.transactionSync(() => {
      for (const table of [
        "exec_inbox_messages",
        "exec_inbox_applied",
        "exec_inbox_resumes",
        "exec_inbox_tool_calls",
        "exec_inbox_call_handles",
      ]) {
        this.sql.exec(`DELETE FROM ${table}`);
      }
    });
    this.commit({ state: { ...EMPTY, lifetime } });
  }
}

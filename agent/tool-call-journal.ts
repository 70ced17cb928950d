// The journal a kit keeps of the tool calls that cannot be taken back (an exec_command, a
// write_stdin that sends characters), written before the runner is asked. Where the journal is
// stored is the kit's; what recovery makes of an entry is recover-tool-calls.ts's.

/** The tools whose calls are journaled: running a command, sending it characters. */
export type JournaledTool = "exec_command" | "write_stdin";

/** One journaled call (persisted as JSON: evolve by adding fields). */
export interface JournaledCall {
  /** The model's id for the call: the id its result is given under. */
  readonly toolCallId: string;
  readonly toolName: JournaledTool;
  /** The input as the tool took it. */
  readonly input: Readonly<Record<string, unknown>>;
  /** exec_command: the runner's handle once it answered with one (the command went on). */
  readonly handle: string | null;
  /** The answer the tool gave (exec_command: ended within its yield); null until then. */
  readonly answer: unknown;
}

/** What a tool writes, and awaits, before each step of a call that cannot be taken back. */
export interface ToolCallJournal {
  /**
   * Before the runner is asked: from here on the command may have started (or the characters
   * been sent). Each begin is a new call, even under an id journaled already.
   */
  begin(
    toolCallId: string,
    input: Readonly<Record<string, unknown>>,
    toolName?: JournaledTool,
  ): Promise<void>;
  /** The runner answered with a handle: exec-inbox's job of that handle is the call's truth. */
  handed(toolCallId: string, handle: string): Promise<void>;
  /** The runner answered: this answer is the call's result. */
  answered(toolCallId: string, answer: unknown): Promise<void>;
}

/** One of the journal's three writes. */
export type JournalWrite =
  | {
      readonly kind: "begin";
      readonly toolName: JournaledTool;
      readonly input: Readonly<Record<string, unknown>>;
    }
  | { readonly kind: "handed"; readonly handle: string }
  | { readonly kind: "answered"; readonly answer: unknown };

/**
 * The journal after one write: a begin adds an entry (two calls under one id stay two); a
 * handed or answered changes the newest entry of its id.
 */
export function journalEntry(
  journal: readonly JournaledCall[],
  toolCallId: string,
  write: JournalWrite,
): JournaledCall[] {
  const at = journal.findLastIndex((call) => call.toolCallId === toolCallId);
  if (write.kind === "begin" || at === -1) {
    const call: JournaledCall = {
      toolCallId,
      toolName: write.kind === "begin" ? write.toolName : "exec_command",
      input: write.kind === "begin" ? write.input : {},
      handle: write.kind === "handed" ? write.handle : null,
      answer: write.kind === "answered" ? write.answer : null,
    };
    return [...journal, call];
  }
  const change = write.kind === "handed" ? { handle: write.handle } : { answer: write.answer };
  return journal.map((call, index) => (index === at ? { ...call, ...change } : call));
}

/** A journal whose entries can be read back: the calls made so far, recovered ones included. */
export type PersistedJournal = ToolCallJournal & { entries(): readonly JournaledCall[] };

/** A journal held in memory whose every write is handed to `persist` (awaited) before it returns. */
export function persistedJournal(
  initial: readonly JournaledCall[],
  persist: (journal: readonly JournaledCall[]) => Promise<void>,
): PersistedJournal {
  let journal = [...initial];
  const write = async (toolCallId: string, change: JournalWrite) => {
    journal = journalEntry(journal, toolCallId, change);
    await persist(journal);
  };
  return {
    entries: () => journal,
    begin: (toolCallId, input, toolName = "exec_command") =>
      write(toolCallId, { kind: "begin", toolName, input }),
    handed: (toolCallId, handle) => write(toolCallId, { kind: "handed", handle }),
    answered: (toolCallId, answer) => write(toolCallId, { kind: "answered", answer }),
  };
}

/** The handles the journal's exec_command calls were given, kept after the turn is stored. */
export const journaledHandles = (
  journal: readonly JournaledCall[],
): Array<{ toolCallId: string; handle: string }> =>
  journal.flatMap((call) =>
    call.handle === null ? [] : [{ toolCallId: call.toolCallId, handle: call.handle }],
  );

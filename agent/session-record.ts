// The agent host's durable record of one session: the conversation and what the kit needs to
// recover after a crash. How a host stores it is its `ConversationStore`'s (conversation-store.ts).
import type { ModelMessage } from "ai";
import type { JournaledCall } from "./recover-tool-calls";

/** The run the kit is driving, kept so a restarted host can finish it (persisted: add fields only). */
export interface ActiveRun {
  readonly runId: string;
  /** The resume that started it, or null for a human message. */
  readonly resumeId: string | null;
  /** Latest lease end of the claims this run made: a restarted host re-claims after it. */
  readonly leaseExpiresAt: number;
  /** A human message not yet answered by a stored turn. */
  readonly pendingUserText: string | null;
}

/** Persisted as JSON (the messages a row each, the rest one column); evolve by adding optional fields. */
export interface SessionRecord<M = ModelMessage> {
  readonly sessionId: string;
  /** The exec-inbox lifetime this conversation belongs to: a resume of another one is refused (404). */
  readonly lifetime: string;
  /** The conversation in the turn engine's own terms (the AI SDK's `ModelMessage`s by default). */
  readonly messages: M[];
  /** Background handles the model started and has not yet seen end. */
  readonly running: string[];
  /** Inbox envelope ids already put into `messages` (the model sees each once). */
  readonly applied: string[];
  /** `webhook-id`s (= resume ids) received, newest last, bounded. */
  readonly resumes: string[];
  /** A resume received and not yet taken by a registered run. */
  readonly pendingResume: string | null;
  readonly activeRun: ActiveRun | null;
  /**
   * The exec_command calls of the turn under way, journaled before the runner is asked; emptied
   * when the turn is stored. Entries left after a crash are recovered, never run again. Absent in
   * records of older hosts: none.
   */
  readonly toolCalls?: JournaledCall[];
  /**
   * The runner's handle of each background exec_command call of the stored turns, newest last,
   * bounded: a call whose result a compaction dropped is matched to its job. Absent: none kept.
   */
  readonly callHandles?: Array<{ readonly toolCallId: string; readonly handle: string }>;
}

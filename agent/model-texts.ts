// Every note the exec tools add to an answer for the model, in one place, so docs/agent-kit.md can
// list them and a test can hold the list to them. When each is shown is exec-tools.ts's.
export { backgroundNote } from "../shared/background-note";
export { jobOutcomeLine, outcomeLine, shownExitCode } from "../shared/outcome-line";

/** A `lost` job the model pulls: a vanished runner is said plainly. */
export const lostNote = (endedBy: string | null): string =>
  endedBy === "heartbeat_timeout"
    ? "The runner stopped sending heartbeats and is presumed gone with its machine: the command may have finished, failed or still be running there. Its outcome is unknown, not a result."
    : "The runner lost this process: its outcome is unknown, not a result.";

/** The runner no longer knows a command, and exec-inbox holds no result for it. */
export const RUNNER_FORGOT_NOTE =
  "The runner no longer knows this command and no result was reported: its outcome is unknown.";

/** The runner cannot be reached: the answer is the tail its last heartbeat reported at `at`. */
export const unreachableNote = (at: string): string =>
  `The runner cannot be reached right now. This is the tail of the output it last reported, at ${at}; the command may have moved on. Try write_stdin again later.`;

/** write_stdin with chars while the runner cannot be reached: prefixed to the note above. */
export const INPUT_NOT_SENT = "Your input was not sent.";

/** A background command exec-inbox could not take: stopped, or left running unwatched. */
export const untakenNote = (killed: boolean, error: unknown): string =>
  killed
    ? `The command was stopped: exec-inbox could not take it in the background (${String(error)}). Run it again later.`
    : `exec-inbox could not take the command in the background (${String(error)}) and it could not be stopped: its outcome is unknown and nobody will report it.`;

/** A handle the model named that is not a job it may read (thrown: the model reads the message). */
export const noCommand = (handle: string, ofThisSession: boolean): string =>
  ofThisSession
    ? `no command with session_id ${handle} in this session`
    : `no command with session_id ${handle}`;

/** Leads every result recovery gives a call: the model must not infer it ran twice, or not at all. */
export const RECOVERED_NOT_AGAIN =
  "This call's result was recovered; the command was not started again.";

/** A recovered call of a running job whose runner reported progress: what its output is. */
export const recoveredTailNote = (at: string): string =>
  `The output is the tail it last reported, at ${at}.`;

/** A recovered call of a finished job: its result is the one exec-inbox stored. */
export const RECOVERED_STORED = "This is the result exec-inbox stored.";

/** A recovered exec_command that ended within its yield: the answer the kit journaled. */
export const RECOVERED_ANSWERED =
  "This call's result was recovered from the kit's journal: it is the answer the runner gave when the command ended within its yield; the command was not started again.";

/** The outcome line of a recovered call whose outcome nobody can tell. */
export const RECOVERED_UNKNOWN_OUTCOME = "outcome unknown (not reported)";

/** Why a recovered call's outcome is unknown: what the kit and exec-inbox know of it. */
export type RecoveredUnknown = "unasked" | "untaken" | "expired" | "dropped" | "ambiguous";

/** The note of a recovered call whose outcome nobody can tell; never a success. */
export function recoveredUnknownNote(why: RecoveredUnknown, handle = ""): string {
  switch (why) {
    case "unasked":
      return `${RECOVERED_NOT_AGAIN} The runner's answer to this call was never recorded (the host stopped, or the call failed), so the command may or may not have run, and nothing will report its end: its outcome is unknown. Check its effects before running it again.`;
    case "untaken":
      return `${RECOVERED_NOT_AGAIN} The runner started it with session_id ${handle}, but exec-inbox could not take it, so nothing will report its end: its outcome is unknown. Check its effects before running it again.`;
    case "expired":
      return `${RECOVERED_NOT_AGAIN} exec-inbox no longer keeps its result (a result is kept for a while after it ended): its outcome is unknown here.`;
    case "dropped":
      return "The result of this call was dropped from the conversation and the kit kept no handle for it: it ended within its yield, or its outcome is unknown. The command was not started again.";
    case "ambiguous":
      return "The result of this call was dropped from the conversation, and more than one command was started under its id: which one it was is unknown, and so is its outcome. The command was not started again.";
  }
}

/** A recovered write_stdin whose characters may have reached the command before the host stopped. */
export const RECOVERED_INPUT_MAYBE_SENT =
  "This call's result was recovered: its input was sent, or possibly sent, to the command. Do not send it again; read the command's output with write_stdin and empty chars.";

/**
 * A recovered call answered before the turn was stored (a write_stdin that sent characters, an
 * exec_command exec-inbox could not take): the answer the kit journaled, its own note after.
 */
export const RECOVERED_FROM_JOURNAL =
  "This call's result was recovered from the kit's journal; the call was not made again.";

/** A write_stdin whose result a compaction dropped: the job's truth now, not the dropped answer. */
export const RECOVERED_WRITE_STDIN =
  "The result of this write_stdin call was dropped from the conversation; this is what exec-inbox knows of the command now. Any input it carried was not sent again.";

/** A read_output or grep_output whose result a compaction dropped: reading has no effect. */
export const RECOVERED_READ_DROPPED =
  "The result of this call was dropped from the conversation. It only read output: ask for it again if you need it.";

/** Any other tool call whose result a compaction dropped: the kit cannot tell what it did. */
export const RECOVERED_OTHER_DROPPED =
  "The result of this call was dropped from the conversation: what it did is unknown here, and it was not made again.";

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
  "The agent host restarted after this call; the command was not started again.";

/** A recovered call of a running job whose runner reported progress: what its output is. */
export const recoveredTailNote = (at: string): string =>
  `The output is the tail it last reported, at ${at}.`;

/** A recovered call of a finished job: its result is the one exec-inbox stored. */
export const RECOVERED_STORED = "This is the result exec-inbox stored.";

/** Why a recovered call's outcome is unknown: what the kit and exec-inbox know of it. */
export type RecoveredUnknown = "unasked" | "untaken" | "expired" | "dropped";

/** The note of a recovered call whose outcome nobody can tell; never a success. */
export function recoveredUnknownNote(why: RecoveredUnknown, handle = ""): string {
  switch (why) {
    case "unasked":
      return `${RECOVERED_NOT_AGAIN} The host stopped while the runner was being asked to start it, so it may or may not have run, and nothing will report its end: its outcome is unknown. Check its effects before running it again.`;
    case "untaken":
      return `${RECOVERED_NOT_AGAIN} The runner started it with session_id ${handle}, but the host stopped before exec-inbox took it, so nothing will report its end: its outcome is unknown. Check it with write_stdin.`;
    case "expired":
      return `${RECOVERED_NOT_AGAIN} exec-inbox no longer keeps its result (a result is kept for a while after it ended): its outcome is unknown here.`;
    case "dropped":
      return "The result of this call was dropped from the conversation and the kit kept no handle for it: it ended within its yield, or its outcome is unknown. The command was not started again.";
  }
}

// What a model is told when its command goes to the background: a wake is promised only when
// exec-inbox said one will come (`will_wake` of the reservation). Reserving the job is the caller's.

/** The note beside a background command's handle, for every kit and the MCP tool. */
export function backgroundNote(handle: string, willWake: boolean): string {
  return willWake
    ? `Still running in the background. You will get a runtime message when it ends; then read it with write_stdin (session_id="${handle}").`
    : `Still running in the background. Nothing will wake you when it ends: this session has no wake path. Check on it with write_stdin (session_id="${handle}") before you rely on its result.`;
}

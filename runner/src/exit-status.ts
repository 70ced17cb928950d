// How a command ended, from its leader's exit: the shell's own, or bwrap's report of it.
// What that exit means for the completion is completion.ts's.
import { constants } from "node:os";

export type Exit =
  | { readonly kind: "exited"; readonly exitCode: number }
  | { readonly kind: "signaled"; readonly signal: string }
  | { readonly kind: "spawn_failed"; readonly message: string };

const SIGNAL_NAMES = new Map(Object.entries(constants.signals).map(([name, n]) => [n, name]));

/**
 * bwrap exits 128 + N for a command ended by signal N (as a shell reports a child's death), so in
 * the sandbox such a status is read as the signal; an `exit 137` of the command's own reads alike.
 */
export function exitOf(
  code: number | null,
  signal: NodeJS.Signals | null,
  sandboxed: boolean,
): Exit {
  if (signal !== null) return { kind: "signaled", signal };
  const exitCode = code ?? 0;
  const name = sandboxed && exitCode > 128 ? SIGNAL_NAMES.get(exitCode - 128) : undefined;
  return name === undefined ? { kind: "exited", exitCode } : { kind: "signaled", signal: name };
}

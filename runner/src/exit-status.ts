// How a command ended, from its leader's exit: the shell's own, or bwrap's report of it.
// What that exit means for the completion is completion.ts's.
import { constants } from "node:os";

export type Exit =
  | { readonly kind: "exited"; readonly exitCode: number }
  | { readonly kind: "signaled"; readonly signal: string }
  | { readonly kind: "spawn_failed"; readonly message: string };

const SIGNAL_NAMES = new Map(Object.entries(constants.signals).map(([name, n]) => [n, name]));

/**
 * A signal is claimed only on evidence. Node's own `signal` is the leader's wait status: bash, or
 * bwrap itself (a kill of the whole process group reaches it). bwrap exits 128 + N both for a
 * command ended by signal N and for one that ran `exit 128+N`, so in the sandbox such a status is
 * read as signal N only when the runner sent N (`sent`: a kill request, its shutdown, a limit);
 * otherwise it is the exit code the shell would report.
 */
export function exitOf(
  code: number | null,
  signal: NodeJS.Signals | null,
  sandboxed: boolean,
  sent: ReadonlySet<string> = new Set(),
): Exit {
  if (signal !== null) return { kind: "signaled", signal };
  const exitCode = code ?? 0;
  const name = sandboxed && exitCode > 128 ? SIGNAL_NAMES.get(exitCode - 128) : undefined;
  return name !== undefined && sent.has(name)
    ? { kind: "signaled", signal: name }
    : { kind: "exited", exitCode };
}

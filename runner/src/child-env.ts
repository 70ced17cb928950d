// Builds the environment of the commands the model runs: an allow-list of the runner's own, plus
// the names an operator opts into. Which extra names to pass is the caller's (RUNNER_CHILD_ENV).

/** What a shell needs to behave like a login shell's child; nothing that configures the runner. */
const ALLOWED_NAMES = new Set([
  "PATH",
  "HOME",
  "LANG",
  "LANGUAGE",
  "TZ",
  "USER",
  "LOGNAME",
  "SHELL",
  "TMPDIR",
]);

const isAllowed = (name: string): boolean => ALLOWED_NAMES.has(name) || name.startsWith("LC_");

export function childEnvironment(
  parent: NodeJS.ProcessEnv,
  extraNames: readonly string[] = [],
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(parent)) {
    if (value !== undefined && (isAllowed(name) || extraNames.includes(name))) env[name] = value;
  }
  // Tools then print plain text, which is what the model reads.
  return { ...env, NO_COLOR: "1", TERM: "dumb" };
}

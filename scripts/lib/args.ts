// The one command-line parser of the scripts: Node's util.parseArgs over `--quick` and numeric
// `--name N` options. What the numbers mean, and their defaults, are the script's.
import { parseArgs } from "node:util";

/**
 * `--quick` and the numeric options `names`: each a count, a duration or a seed, so a whole number
 * of at least 1. An unknown option or any other value stops the script with a message instead of
 * running with a guess (`--completions -5` would otherwise run nothing and report success).
 */
export function scriptArgs<Name extends string>(
  names: readonly Name[],
  argv: readonly string[] = process.argv.slice(2),
): { quick: boolean; number(name: Name, fallback: number): number } {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      quick: { type: "boolean", default: false },
      ...Object.fromEntries(names.map((name) => [name, { type: "string" as const }])),
    },
    strict: true,
    allowPositionals: false,
  });
  return {
    quick: values.quick === true,
    number(name, fallback) {
      const raw = (values as Record<string, string | boolean | undefined>)[name];
      if (typeof raw !== "string") return fallback;
      const value = Number(raw);
      if (raw.trim() === "" || !Number.isSafeInteger(value) || value < 1) {
        throw new Error(`--${name} must be a whole number of at least 1, not "${raw}"`);
      }
      return value;
    },
  };
}

// `npm run bench -- [NAME] [ARGS…]`: the one entry of the benchmarks. Without a name (or with only
// options, `--quick`) it is the main comparison run (bench/bench.ts); with one, it runs that
// benchmark with the rest of the arguments. Each benchmark's own options are in its file's header.
import { fileURLToPath } from "node:url";

/** Each benchmark's name, its entry file in bench/, and what it measures (for the list). */
export const BENCHMARKS = {
  ab: ["bench-ab.ts", "two builds side by side: CPU per wake and latency, interleaved"],
  binding: ["bench-binding.ts", "the wake over a service binding against the signed webhook"],
  commands: [
    "bench-commands.ts",
    "a background command start to result: the REST API against the MCP endpoint",
  ],
  heartbeats: ["bench-heartbeats.ts", "what liveness costs: rows, alarms and CPU per heartbeat"],
  index: ["bench-index.ts", "the session index off and on under wrangler dev"],
  objects: ["bench-objects.ts", "session objects open at once in one workerd, heap per object"],
  outputs: ["bench-outputs.ts", "full outputs on local R2: upload rate, range reads, rows"],
  profile: ["profile-completion.ts", "a CPU profile of the isolate as completions wake sessions"],
  rows: ["bench-wake-rows.ts", "SQLite rows a wake and the agent's turn after it write and read"],
  sandbox: ["bench-sandbox.ts", "what the runner's sandbox adds to a short command"],
  soak: ["soak.ts", "a steady mix of every operation against wrangler dev, over minutes"],
  statements: [
    "session-statements.ts",
    "the SQL strings a new session runs until it waits, for bench/sql-heap-probe.ts",
  ],
  stress: ["stress.ts", "one session driven to 2,000 completions and 20,000 messages"],
  syscalls: ["bench-syscalls.ts", "the durable writes (fsync calls) a wake costs, with strace"],
  waiting: ["bench-waiting.ts", "RSS per waiting session alone, per build, and where it goes"],
} as const satisfies Record<string, readonly [string, string]>;

export type BenchmarkName = keyof typeof BENCHMARKS;

/**
 * The entry file and its own arguments for a command line, or null for a name that is not a
 * benchmark. An argument that starts with `-` is an option of the main run, not a name.
 */
export function entryOf(args: readonly string[]): { file: string; args: string[] } | null {
  const [first, ...rest] = args;
  if (first === undefined || first.startsWith("-")) return { file: "bench.ts", args: [...args] };
  if (!Object.hasOwn(BENCHMARKS, first)) return null;
  return { file: BENCHMARKS[first as BenchmarkName][0], args: rest };
}

export function usage(): string {
  const width = Math.max(...Object.keys(BENCHMARKS).map((name) => name.length));
  const lines = Object.entries(BENCHMARKS).map(
    ([name, [, what]]) => `  npm run bench -- ${name.padEnd(width)}  ${what}`,
  );
  return [
    "usage: npm run bench -- [NAME] [ARGS…]",
    `  npm run bench${" ".repeat(width + 4)}  the main comparison run (add -- --quick for a short one)`,
    ...lines,
  ].join("\n");
}

async function main(): Promise<void> {
  if (["help", "--help", "-h"].includes(process.argv[2] ?? "")) {
    console.log(usage());
    return;
  }
  const entry = entryOf(process.argv.slice(2));
  if (entry === null) {
    console.error(`no benchmark named "${process.argv[2]}"\n${usage()}`);
    process.exitCode = 1;
    return;
  }
  // The entry runs in this process, reading its own arguments as when started alone
  // (`npx tsx bench/bench-ab.ts …`): process.argv names it, and the entries that are also parts
  // of the main run start themselves only when argv[1] is their own file.
  const path = fileURLToPath(new URL(entry.file, import.meta.url));
  process.argv = [process.argv[0] ?? "node", path, ...entry.args];
  await import(path);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();

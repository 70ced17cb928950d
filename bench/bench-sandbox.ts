// `npm run bench -- sandbox`, also part of `npm run bench`: what the runner's sandbox adds to a short
// exec_command — `true` through the process table's own launch path, without the sandbox, in
// bwrap, and in bwrap with the per-command cgroups main.ts uses. Samples of the three interleave.
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { probeBwrap } from "../runner/src/bwrap";
import { cgroupRoots, removeRoots } from "../runner/src/cgroup";
import { ProcessTable } from "../runner/src/process-table";
import {
  DEFAULT_LIMITS,
  DEFAULT_SANDBOX_USER,
  type SandboxMode,
} from "../runner/src/sandbox-settings";
import { buildSeccompFilter } from "../runner/src/seccomp";
import { say, table } from "./lib/report";
import { percentile } from "./lib/stats";

const SAMPLES = 200;
/** What main.ts runs commands as, and with, on this machine. */
const SANDBOX_USER = process.getuid?.() === 0 ? DEFAULT_SANDBOX_USER : null;
const FILTER = buildSeccompFilter();
const SECCOMP = FILTER.ok ? FILTER.program : null;
const WARMUP = 20;

function tableFor(
  mode: SandboxMode,
  root: string,
  cgroups: ReturnType<typeof cgroupRoots>,
): ProcessTable {
  const workRoot = join(root, "work");
  return new ProcessTable({
    launch: {
      sandbox: {
        mode,
        network: "none",
        workRoot,
        limits: DEFAULT_LIMITS,
        user: mode === "bwrap" ? SANDBOX_USER : null,
        readOnly: [],
        seccomp: mode === "bwrap" ? SECCOMP : null,
        warning: null,
      },
      cgroups,
      stateDir: join(root, "state"),
    },
  });
}

export async function benchSandbox(samples = SAMPLES): Promise<void> {
  say("### The runner's sandbox per command (`npm run bench -- sandbox`)");
  const probe = probeBwrap(SANDBOX_USER, SECCOMP);
  if (!probe.works) {
    say(`Skipped: ${probe.why}.`);
    return;
  }
  const root = mkdtempSync(join(tmpdir(), "exec-inbox-bench-sandbox-"));
  // The sandbox's user passes through it to its workspace.
  chmodSync(root, 0o711);
  const cgroups = cgroupRoots();
  const none = { memory: null, pids: null };
  const variants = [
    { name: "none (bash under the limits wrapper)", table: tableFor("none", root, none) },
    { name: "bwrap", table: tableFor("bwrap", root, none) },
    {
      name: `bwrap + cgroups (${[cgroups.memory && "memory", cgroups.pids && "pids"].filter(Boolean).join(", ") || "none writable"})`,
      table: tableFor("bwrap", root, cgroups),
    },
  ];
  const times = variants.map(() => [] as number[]);
  try {
    for (let i = 0; i < WARMUP + samples; i += 1) {
      for (const [index, variant] of variants.entries()) {
        const started = process.hrtime.bigint();
        const answer = await variant.table.execCommand({ cmd: "true", workspace: "bench" });
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        if (answer.exit_code !== 0)
          throw new Error(`${variant.name}: true exited ${answer.exit_code}`);
        if (i >= WARMUP) times[index]?.push(ms);
      }
    }
  } finally {
    for (const variant of variants) await variant.table.shutdown();
    removeRoots(cgroups);
    rmSync(root, { recursive: true, force: true });
  }
  const base = percentile(times[0] ?? [], 50);
  table(
    ["exec_command `true`", "p50 ms", "p99 ms", "added at p50 ms"],
    variants.map((variant, index) => {
      const p50 = percentile(times[index] ?? [], 50);
      return [
        variant.name,
        p50.toFixed(2),
        percentile(times[index] ?? [], 99).toFixed(2),
        index === 0 ? "–" : (p50 - base).toFixed(2),
      ];
    }),
  );
  say(
    `${samples} samples each after ${WARMUP} warm-up, interleaved; from the call to the answer, spawn to exit.`,
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  benchSandbox().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}

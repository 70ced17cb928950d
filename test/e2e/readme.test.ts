// The README and the API reference as a new user meets them: every shell block, in order, in one
// shell per document, against a real `npm start` on fresh state. A block fails on any answer the
// text does not expect: blocks call curl through `c` (`--fail-with-body`), and a bare `curl` line
// must say in a `# →` comment which status it gets.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, spawnCollecting, waitForHealthy } from "../support/local-stack";
import { killTree, type Proc, processTree, stackDump, stopByPid } from "../support/process-tree";

interface Block {
  readonly file: string;
  readonly line: number;
  readonly code: string;
}

const SKIP = /^<!-- readme-test: skip: .+ -->$/;

/** The ```sh blocks of a Markdown file, with the line each starts on; skipped ones left out. */
function shellBlocks(file: string): { run: Block[]; skipped: Block[] } {
  const lines = readFileSync(file, "utf8").split("\n");
  const run: Block[] = [];
  const skipped: Block[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    if (!/^```(sh|bash)\s*$/.test(lines[i] ?? "")) continue;
    const start = i;
    const body: string[] = [];
    for (i += 1; i < lines.length && lines[i] !== "```"; i += 1) body.push(lines[i] ?? "");
    const block = { file, line: start + 1, code: body.join("\n") };
    (SKIP.test(lines[start - 1] ?? "") ? skipped : run).push(block);
  }
  return { run, skipped };
}

/** Lines that call curl without `c` and do not say which status they expect. */
const unannounced = (block: Block) =>
  block.code.split("\n").filter((line) => /^\s*curl\b/.test(line) && !/#\s*→\s*\d{3}\b/.test(line));

async function startService(state: string) {
  const port = await freePort();
  const { child, output, errors } = spawnCollecting(
    "npm",
    ["start", "--", "--persist-to", state],
    { PORT: String(port), NO_COLOR: "1" },
    process.cwd(),
  );
  const base = `http://127.0.0.1:${port}`;
  let seen: Proc[] = [];
  /** npm and every process under it, now; remembered for `kill`, which must find them orphaned. */
  const tree = () => {
    seen = processTree(child.pid as number);
    return seen;
  };
  await waitForHealthy(base, child, output, 45_000);
  tree();
  return {
    port,
    base,
    child,
    errors,
    tree,
    /** For afterAll: whatever a failed test left of the tree, SIGKILLed. */
    kill() {
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null)
        process.kill(-child.pid, "SIGKILL");
      killTree(seen);
    },
  };
}

/** Runs the blocks in one bash, stopping at the first command that fails. */
async function runInOneShell(blocks: Block[], env: Record<string, string>) {
  const script = [
    "set -euo pipefail",
    ...blocks.flatMap((block) => [`echo "::block ${block.file}:${block.line}"`, block.code]),
    'echo "::all blocks ran"',
  ].join("\n");
  const child = spawn("bash", ["-c", script], {
    cwd: process.cwd(),
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  child.stdout.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr.on("data", (chunk) => {
    output += chunk;
  });
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  // A background job a block left running (the stand-in agent host, if a block failed first).
  if (child.pid !== undefined) {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {}
  }
  return { code, output };
}

/** What git sees in the checkout: a block must leave no file behind. */
function checkoutStatus(): Promise<string> {
  return new Promise((resolve, reject) => {
    const git = spawn("git", ["status", "--porcelain", "--untracked-files=all"], {
      cwd: process.cwd(),
    });
    let out = "";
    git.stdout.on("data", (chunk) => {
      out += chunk;
    });
    git.once("error", reject);
    git.once("exit", () => resolve(out));
  });
}

const states: string[] = [];
afterAll(() => {
  for (const state of states) rmSync(state, { recursive: true, force: true });
});

// Each document's npm start ends by another signal: `kill <pid>` and Ctrl-C's.
describe.each([
  ["README.md", "SIGTERM"],
  ["docs/api.md", "SIGINT"],
] as const)("the shell blocks of %s", (file, signal) => {
  let service: Awaited<ReturnType<typeof startService>> | undefined;
  const started = () => {
    if (service === undefined) throw new Error("npm start did not start");
    return service;
  };
  beforeAll(async () => {
    const state = mkdtempSync(join(tmpdir(), "exec-inbox-readme-"));
    states.push(state);
    service = await startService(state);
  }, 60_000);
  afterAll(() => service?.kill());

  it("each curl the text expects to fail says which status it gets", () => {
    const { run } = shellBlocks(file);
    expect(run.length).toBeGreaterThan(0);
    expect(run.flatMap(unannounced)).toEqual([]);
  });

  it("run in order in one shell against npm start, with no failed answer and nothing left behind", async () => {
    const before = await checkoutStatus();
    const { run } = shellBlocks(file);
    const result = await runInOneShell(run, {
      PORT: String(started().port),
      HOOK_PORT: String(await freePort()),
    });
    expect(result.output, `the block that failed is the last ::block line`).toContain(
      "::all blocks ran",
    );
    expect(result.code).toBe(0);
    expect(await checkoutStatus()).toBe(before);
  }, 180_000);

  it(`npm start, sent ${signal} at the PID npm holds, ends every process of its tree (wrangler, workerd), frees its port and prints no stack`, async () => {
    const { child, port, errors, tree } = started();
    const processes = tree();
    expect(processes.map((proc) => proc.command)).toEqual(
      expect.arrayContaining([expect.stringMatching(/workerd serve/)]),
    );
    const stopped = await stopByPid(child, processes, signal, port, 30_000);
    expect(stopped.left).toEqual([]);
    expect(stopped.portFree).toBe(true);
    expect(stopped.exit).toEqual({ code: null, signal });
    expect(stackDump(errors())).toEqual([]);
  }, 60_000);
});

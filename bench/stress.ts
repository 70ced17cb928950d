// `npm run bench -- stress [--quick | --completions N --messages M --concurrency C]`: drives ONE
// session under the real wrangler dev to 2,000 completions of 256 KiB and 20,000 messages (a long
// session's scale) and reports at 0 / 25 / 50 / 100 % of the run: workerd memory, completion latency and the
// latency and size of every read route. Prints FAIL for what those limits forbid; exits 1 on any FAIL.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { stripVTControlCharacters } from "node:util";
import {
  type Callback,
  ExecInboxClient,
  ExecInboxError,
  type Fetcher,
  postCompletion,
} from "@exec-inbox/client";
import { scriptArgs } from "../scripts/lib/args";
import { AGENT_TOKEN, startWranglerDev } from "../test/support/local-stack";
import { type HeapUsage, isolateHeap } from "./lib/isolate-heap";
import { percentile } from "./lib/stats";
import { UNLIMITED_VARS } from "./lib/unlimited";
import { workerdRssMiB } from "./lib/workerd-rss";

const argv = process.argv.slice(2);
const args = scriptArgs(["completions", "messages", "concurrency"], argv);
const quick = args.quick;
const arg = args.number;
const COMPLETIONS = arg("completions", quick ? 200 : 2000);
const MESSAGES = arg("messages", quick ? 2000 : 20_000);
// Sequential by default: one session's completions are serialized by its object anyway, and one in
// flight at a time measures the completion path itself rather than the queue in front of it.
const CONCURRENCY = arg("concurrency", 1);
const MESSAGE_CONCURRENCY = 16;
const FILLER = "the quick brown fox jumps over the lazy dog ".repeat(5); // messages of ~200 bytes
const OUTPUT_BYTES = 262_144; // MAX_OUTPUT_BYTES: every result is as large as the service accepts.
// Claim+ack after this many completions: the unacked backlog stays far below the 1024 at which the
// inbox refuses completions (429), and a claim answer (~21 KiB per item) stays below 1 MiB.
const CLAIM_EVERY = 32;
const SAMPLES = 20;
const MIB = 1024 * 1024;
const RSS_LIMIT_MIB = 64;
const P50_LIMIT = 1.2;
const CHECKPOINTS = [0, 0.25, 0.5, 1].map((share) => Math.round(share * COMPLETIONS));
const messagesAt = (completions: number) => Math.round((MESSAGES * completions) / COMPLETIONS);

type Rss = { runtime: number; proxy: number; runtimeAnon: number };
type Sample = { status: number; bytes: number; ms: number };
type Answer<T> = Sample & { value: T | undefined };
const is2xx = (status: number) => status >= 200 && status < 300;
const failures = new Map<string, { count: number; example: string }>();
const flags: string[] = [];
const columns: string[] = [];
const SERVING = "serving workerd RSS (Δ baseline)";
const PROXY = "proxy workerd RSS (Δ baseline)";
const CONTROL = "control: same 256 KiB bodies refused (413), nothing stored: serving RSS";
const HEAP = "isolate JS heap used / held (Δ held)";
const COMPLETION = "completion p50 / p99";
// Seeded so the table keeps this order although column 0's completion cell is filled last.
const rows = new Map<string, string[]>(
  [SERVING, PROXY, CONTROL, HEAP, COMPLETION].map((row) => [row, []]),
);
let base = "";
let driverFailures = 0;

/**
 * One timed round trip through the typed client, body included: the time and size are taken when
 * the last byte arrived, before the client parses it. A refusal or network error is recorded, never
 * thrown.
 */
async function call<T>(
  label: string,
  send: (inbox: ExecInboxClient, fetcher: Fetcher) => Promise<T>,
): Promise<Answer<T>> {
  const started = performance.now();
  let sample: Sample = { status: 0, bytes: 0, ms: 0 };
  let request = label;
  const fetcher: Fetcher = async (outgoing) => {
    request = `${outgoing.method} ${new URL(outgoing.url).pathname}`;
    const response = await fetch(outgoing, { signal: AbortSignal.timeout(120_000) });
    const body = await response.arrayBuffer();
    sample = { status: response.status, bytes: body.byteLength, ms: performance.now() - started };
    // A 204 may carry no body at all, not even an empty one.
    return new Response(body.byteLength === 0 ? null : body, response);
  };
  const inbox = new ExecInboxClient({ baseUrl: base, token: AGENT_TOKEN, fetch: fetcher });
  try {
    const value = await send(inbox, fetcher);
    return { ...sample, value };
  } catch (error) {
    const detail = error instanceof ExecInboxError ? error.problem.detail : String(error);
    record(label, request, sample.status, detail);
    const ms = sample.status === 0 ? performance.now() - started : sample.ms;
    return { ...sample, ms, value: undefined };
  }
}

/** Counts failures per route and status, printing the first of each kind as it happens. */
function record(label: string, request: string, status: number, detail: string): void {
  const key = `${label} → ${status === 0 ? "no answer" : `HTTP ${status}`}`;
  const seen = failures.get(key) ?? { count: 0, example: `${request}: ${detail.slice(0, 160)}` };
  seen.count += 1;
  failures.set(key, seen);
  if (seen.count === 1) console.log(`  non-2xx: ${key} (${seen.example})`);
}

/** The driver's calls: a dead or refusing service stops the run instead of taking minutes of errors. */
async function drive<T>(
  label: string,
  send: (inbox: ExecInboxClient, fetcher: Fetcher) => Promise<T>,
): Promise<Answer<T>> {
  const answer = await call(label, send);
  if (!is2xx(answer.status) && ++driverFailures > 50) throw new Error("over 50 driver failures");
  return answer;
}

const median = (values: number[]) => percentile(values, 50);
const ms = (value: number) => `${value.toFixed(1)} ms`;
function size(bytes: number): string {
  if (bytes < 10_240) return `${bytes} B`;
  return bytes < MIB ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / MIB).toFixed(1)} MiB`;
}
const signed = (value: number) => `${value >= 0 ? "+" : ""}${value}`;

/** Records a cell of the final table and prints it as the run goes. */
function put(row: string, column: number, cell: string): void {
  const cells = rows.get(row) ?? [];
  cells[column] = cell;
  rows.set(row, cells);
  console.log(`  ${row}: ${cell}`);
}

/** Adds a flag when `failed`; returns the marker for the table cell. */
function flag(failed: boolean, column: number, what: string): string {
  if (failed) flags.push(`${what} at ${columns[column]}`);
  return failed ? " · FAIL" : "";
}

/** Runs `work` over `items` with at most `concurrency` in flight. */
async function pool<T>(items: T[], concurrency: number, work: (item: T) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

/** A distinct, printable build log per job (no two alike), exactly MAX_OUTPUT_BYTES long. */
function outputFor(job: number): string {
  const lines: string[] = [];
  for (let line = 0, length = 0; length < OUTPUT_BYTES; line += 1) {
    const hash = (Math.imul(job * 7919 + line, 2654435761) >>> 0).toString(16);
    lines.push(`[job ${job}] step ${line} ${hash} ${"=".repeat(48)}\n`);
    length += lines[line]?.length ?? 0;
  }
  return lines.join("").slice(0, OUTPUT_BYTES);
}

/** One session driven to its checkpoints; `s` is its id. */
class Session {
  readonly latencies: number[] = [];
  claims: Array<{ ms: number; bytes: number }> = [];
  done = 0;
  posted = 0;
  constructor(readonly s: string) {}

  async claimAndAck(label: string) {
    const claim = await drive(`${label} claim`, (inbox) => inbox.claim(this.s, { max: 128 }));
    const ids = (claim.value?.claims ?? []).map((c) => c.envelope.id);
    const ack =
      ids.length > 0 ? await drive(`${label} ack`, (inbox) => inbox.ack(this.s, { ids })) : null;
    const status = ack !== null && !is2xx(ack.status) ? ack.status : claim.status;
    return { status, bytes: claim.bytes, ms: claim.ms + (ack?.ms ?? 0), claimed: ids.length };
  }

  /** Reserves and completes `count` jobs, acks what they put in the inbox, then tops up messages. */
  async chunk(count: number): Promise<void> {
    const callbacks: Array<{ callback: Callback; job: number }> = [];
    const jobs = Array.from({ length: count }, (_, k) => this.done + k);
    await pool(jobs, MESSAGE_CONCURRENCY, async (job) => {
      const body = { handle: `job-${job}`, command: `make step-${job}` };
      const reserved = await drive("reserve", (inbox) => inbox.reserveJob(this.s, body));
      if (reserved.value !== undefined) callbacks.push({ callback: reserved.value.callback, job });
    });
    await pool(callbacks, CONCURRENCY, async ({ callback, job }) => {
      const body = { status: "completed", exit_code: 0, output: outputFor(job) } as const;
      const answer = await drive("complete", (_, fetch) =>
        postCompletion(callback, body, { fetch }),
      );
      if (answer.value !== undefined) this.latencies.push(answer.ms);
    });
    this.done += count;
    for (let round = 0; round < 20; round += 1) {
      const claimed = await this.claimAndAck("housekeeping");
      if (claimed.claimed > 0) this.claims.push(claimed);
      if (claimed.claimed < 128) break; // fewer than asked for: the inbox is drained
    }
    const indexes = Array.from({ length: messagesAt(this.done) - this.posted }, (_, k) => k);
    await pool(indexes, MESSAGE_CONCURRENCY, async (k) => {
      const content = `message ${this.posted + k}: ${FILLER}`.slice(0, 200);
      await drive("message", (inbox) => inbox.appendMessage(this.s, { role: "user", content }));
    });
    this.posted = messagesAt(this.done);
  }
}

/** Median latency and largest answer of ~20 samples; flags answers of 1 MiB or more. */
async function probe(row: string, column: number, sample: () => Promise<Sample>, big = false) {
  const times: number[] = [];
  let bytes = 0;
  let status = 200;
  for (let i = 0; i < SAMPLES; i += 1) {
    const answer = await sample();
    times.push(answer.ms);
    bytes = Math.max(bytes, answer.bytes);
    status = answer.status;
    // A refused or oversized answer has said what it has to say: repeating it only slows the run.
    if (!is2xx(status) || (answer.bytes >= MIB && i >= 2)) break;
  }
  const refused = is2xx(status) ? "" : ` · HTTP ${status}`;
  const large = flag(!big && bytes >= MIB, column, `${row}: ${size(bytes)} ≥ 1 MiB`);
  put(row, column, `${ms(median(times))} · ${size(bytes)}${refused}${large}`);
}

/** Memory, the last segment's completions, then every read route, at one checkpoint. */
async function checkpoint(
  session: Session,
  column: number,
  baseline: Rss,
  rss: () => Rss,
  heap: { baseline: HeapUsage; read: () => Promise<HeapUsage> },
) {
  const { s, done, posted, latencies, claims } = session;
  const previous = CHECKPOINTS[column - 1] ?? 0;
  columns[column] = `${done.toLocaleString("en-US")} / ${posted.toLocaleString("en-US")}`;
  console.log(`\n-- ${columns[column]} completions / messages`);
  await sleep(1000); // let in-flight work and its garbage settle before reading memory
  const now = rss();
  const delta = now.runtime - baseline.runtime;
  const grown = flag(delta > RSS_LIMIT_MIB, column, `serving RSS +${delta} MiB > ${RSS_LIMIT_MIB}`);
  const anon = `anonymous ${now.runtimeAnon} MiB (${signed(now.runtimeAnon - baseline.runtimeAnon)})`;
  put(SERVING, column, `${now.runtime} MiB (${signed(delta)})${grown}; ${anon}`);
  put(PROXY, column, `${now.proxy} MiB (${signed(now.proxy - baseline.proxy)})`);
  const js = await heap.read();
  const held = Math.round(js.totalMiB - heap.baseline.totalMiB);
  put(HEAP, column, `${js.usedMiB} / ${js.totalMiB} MiB (${signed(held)})`);
  if (column > 0) {
    const segment = latencies.slice(previous, done);
    const cell = `${ms(median(segment))} / ${ms(percentile(segment, 99))} (n ${segment.length})`;
    put(COMPLETION, column, cell);
    const largest = Math.max(0, ...claims.map((c) => c.bytes));
    const large = flag(largest >= MIB, column, `inbox claim: ${size(largest)} ≥ 1 MiB`);
    const claimed = `${ms(median(claims.map((c) => c.ms)))} · ${size(largest)}${large}`;
    put(`inbox claim of ≤ ${CLAIM_EVERY} + ack (during segment)`, column, claimed);
    session.claims = [];
  }
  const get =
    <T>(label: string, send: (inbox: ExecInboxClient) => Promise<T>) =>
    () =>
      call(label, send);
  await probe(
    "GET session view",
    column,
    get("session view", (c) => c.getSession(s)),
  );
  const jobs = get("job list", (c) => c.listJobs(s, { limit: 100 }));
  await probe("GET exec-jobs?limit=100", column, jobs);
  const done100 = get("job list done", (c) => c.listJobs(s, { status: "done", limit: 100 }));
  await probe("GET exec-jobs?status=done&limit=100", column, done100);
  const messages = get("messages", (c) => c.listMessages(s, { limit: 100 }));
  await probe("GET messages?limit=100", column, messages);
  const after = Math.floor(posted / 2);
  const middle = get("messages middle", (c) => c.listMessages(s, { after, limit: 100 }));
  await probe("GET messages?after=(middle)&limit=100", column, middle);
  await probe("inbox claim {max:128} + ack (drained)", column, () => session.claimAndAck("probe"));
  const pull = get("pull", (c) => c.getJob(s, `job-${Math.floor(done / 2)}`));
  if (done > 0) await probe("GET exec-jobs/{handle} (one pull)", column, pull, true);
}

async function main(): Promise<void> {
  const counts = [COMPLETIONS, MESSAGES, CONCURRENCY];
  if (!counts.every((n) => Number.isInteger(n) && n > 0) || COMPLETIONS < 4)
    throw new Error("--completions (≥ 4), --messages and --concurrency take positive integers");
  const command = `npm run bench -- stress${argv.length > 0 ? ` ${argv.join(" ")}` : ""}`;
  const workerd = JSON.parse(readFileSync("node_modules/workerd/package.json", "utf8")).version;
  const setup = `${COMPLETIONS} completions of ${OUTPUT_BYTES} B at concurrency ${CONCURRENCY}, ${MESSAGES} messages of 200 B at concurrency ${MESSAGE_CONCURRENCY}, claim+ack every ${CLAIM_EVERY}`;
  console.log(`${command}\n${cpus().length} cores (${cpus()[0]?.model}), node ${process.version}`);
  console.log(`workerd ${workerd}; ${setup}`);
  const started = Date.now();
  // A fresh state directory: the run starts from an empty service, whatever `npm start` left behind.
  const stateDir = mkdtempSync(join(tmpdir(), "exec-inbox-stress-"));
  const dev = await startWranglerDev(stateDir, "any", UNLIMITED_VARS);
  base = dev.base;
  const rss = () => workerdRssMiB(dev.pid(), new URL(base).port);
  try {
    // Warm-up in a throwaway session, deleted again: the baselines (memory, the empty session's
    // completion latency) then measure a warmed service, not JIT and cold-start costs.
    const warmup = `stress-warmup-${Date.now().toString(36)}`;
    await call("create warm-up session", (c) => c.createSession({ id: warmup }));
    await new Session(warmup).chunk(16);
    await call("delete warm-up session", (c) => c.deleteSession(warmup));
    await sleep(2000);
    // The snapshot behind a heap reading allocates in workerd: read the heap first, then let it settle.
    const heap = {
      baseline: await isolateHeap(dev.inspectorPort),
      read: () => isolateHeap(dev.inspectorPort),
    };
    await sleep(2000);
    const baseline = rss();
    console.log(`empty service RSS: serving ${baseline.runtime} MiB, proxy ${baseline.proxy} MiB`);
    const sid = `stress-${Date.now().toString(36)}`;
    if ((await call("create session", (c) => c.createSession({ id: sid }))).value === undefined)
      throw new Error("could not create the session");
    const session = new Session(sid);
    for (const [column, target] of CHECKPOINTS.entries()) {
      while (session.done < target)
        await session.chunk(Math.min(CLAIM_EVERY, target - session.done));
      await checkpoint(session, column, baseline, rss, heap);
      console.log(`  (${Math.round((Date.now() - started) / 1000)} s into the run)`);
    }
    // The empty session's cost, for column 0: its first completions, before history built up.
    const first = session.latencies.slice(0, Math.min(100, CHECKPOINTS[1] ?? 100));
    const cell = `${ms(median(first))} / ${ms(percentile(first, 99))} (first ${first.length})`;
    put(COMPLETION, 0, cell);
    const ratio = median(session.latencies.slice(CHECKPOINTS[2])) / median(first);
    const last = CHECKPOINTS.length - 1;
    const slower = flag(!(ratio <= P50_LIMIT), last, `completion p50 ${ratio.toFixed(2)}× empty`);
    console.log(
      `completion p50: ${ratio.toFixed(2)}× the empty session's (≤ ${P50_LIMIT}×)${slower}`,
    );
  } catch (error) {
    flags.push(`run stopped: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    // What wrangler said after start-up besides request lines (a reload when src/ changed under the
    // run, an RPC size limit, a crash) explains failures; colours stripped for pasting.
    const logs = stripVTControlCharacters(dev.logs());
    const said = logs.slice(Math.max(0, logs.indexOf("Ready on"))).split("\n");
    const notes = said.filter(
      (line) => line.trim() && !/Ready on|\] (GET|POST|DELETE) /.test(line),
    );
    if (failures.size > 0) console.log(`\nwrangler dev said:\n${notes.slice(-15).join("\n")}`);
    await dev.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
  await control();

  console.log(`\n${command}\n\n| completions / messages | ${columns.join(" | ")} |`);
  console.log(`| --- |${" --- |".repeat(columns.length)}`);
  for (const [row, cells] of rows)
    console.log(`| ${row} | ${columns.map((_, i) => cells[i] ?? "–").join(" | ")} |`);
  console.log(
    `\n${setup}.\nLatency: median of ${SAMPLES} samples (fewer when refused or ≥ 1 MiB);`,
  );
  console.log("size: the largest answer; Δ: against the warmed, empty service.");
  for (const [key, { count, example }] of failures)
    console.log(`non-2xx ×${count}: ${key} (${example})`);
  for (const failed of flags) console.log(`FAIL: ${failed}`);
  const refused = [...failures.values()].reduce((sum, f) => sum + f.count, 0);
  const verdict = refused === 0 && flags.length === 0 ? "PASS" : "FAIL";
  const seconds = Math.round((Date.now() - started) / 1000);
  const counted = `${seconds} s, ${refused} non-2xx answers, ${flags.length} flags`;
  console.log(`\nstress ${verdict}: ${COMPLETIONS} completions, ${MESSAGES} messages; ${counted}`);
  if (verdict === "FAIL") process.exitCode = 1;
}

/**
 * The runtime's floor: a fresh wrangler dev gets the same number of 256 KiB bodies on a route that
 * reads and parses them and stores nothing (session metadata over its limit → 413). Its RSS growth
 * is what moving the bytes costs workerd and the allocator, whatever the service keeps.
 */
async function control(): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), "exec-inbox-stress-control-"));
  const dev = await startWranglerDev(stateDir, "any", UNLIMITED_VARS);
  base = dev.base;
  const rss = () => workerdRssMiB(dev.pid(), new URL(base).port);
  const body = { id: "control", metadata: { output: "x".repeat(OUTPUT_BYTES) } };
  const inbox = new ExecInboxClient({ baseUrl: base, token: AGENT_TOKEN });
  const send = async (n: number) => {
    for (let i = 0; i < n; i += 1) {
      const status = await inbox.createSession(body).then(
        () => 201,
        (error: unknown) => (error instanceof ExecInboxError ? error.problem.status : 0),
      );
      if (status !== 413) record("control", "POST /v1/sessions", status, "");
    }
  };
  try {
    await send(16);
    await sleep(2000);
    const baseline = rss();
    let sent = 0;
    for (const [column, target] of CHECKPOINTS.entries()) {
      await send(target - sent);
      sent = target;
      await sleep(1000);
      const now = rss();
      const anon = `anonymous ${signed(now.runtimeAnon - baseline.runtimeAnon)}`;
      put(
        CONTROL,
        column,
        `${now.runtime} MiB (${signed(now.runtime - baseline.runtime)}); ${anon}`,
      );
    }
  } finally {
    await dev.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

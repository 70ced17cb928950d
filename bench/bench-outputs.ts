// `npm run bench -- outputs [--quick] [--mib N]`: full outputs (contract §9) on local R2 under the
// real wrangler dev: upload MiB/s through the runner's own uploader, a 1 MiB range read's p50, the
// rows and R2 operations one large completion costs (priced), and a small completion's p50 beside.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, mkdtempSync, openSync, readSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postCompletion } from "@exec-inbox/client";
import { uploadParts } from "../runner/src/part-uploader";
import { scriptArgs } from "../scripts/lib/args";
import type { FullOutputBody } from "../shared/full-output";
import { AGENT_TOKEN, agentClient, startWranglerDev } from "../test/support/local-stack";
import { PRICE } from "./lib/prices";
import { percentile } from "./lib/stats";

const MIB = 1024 * 1024;
const PART_BYTES = 16 * MIB;

const args = scriptArgs(["mib", "reads", "small"]);
const totalMib = args.number("mib", args.quick ? 48 : 200);
const reads = args.number("reads", args.quick ? 20 : 100);
const smalls = args.number("small", args.quick ? 50 : 200);
const size = totalMib * MIB;

/** The parts and the whole hash of a spool file, as the runner's spool computes them. */
function describe(path: string): FullOutputBody {
  const whole = createHash("sha256");
  const parts: FullOutputBody["parts"] = [];
  const fd = openSync(path, "r");
  const buffer = Buffer.alloc(PART_BYTES);
  try {
    for (let offset = 0; offset < size; offset += PART_BYTES) {
      const read = readSync(fd, buffer, 0, Math.min(PART_BYTES, size - offset), offset);
      const bytes = buffer.subarray(0, read);
      whole.update(bytes);
      parts.push({ bytes: read, sha256: createHash("sha256").update(bytes).digest("hex") });
    }
  } finally {
    closeSync(fd);
  }
  return { bytes: size, sha256: whole.digest("hex"), parts };
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "exec-inbox-bench-outputs-"));
  const spool = join(root, "spool.out");
  execFileSync("sh", ["-c", `seq 1 100000000 | head -c ${size} > ${spool}`]);
  const full = describe(spool);
  const dev = await startWranglerDev(join(root, "state"), "any");
  try {
    const inbox = agentClient(dev.base);
    const sid = `bench-outputs-${Date.now()}`;
    await inbox.createSession({ id: sid });
    const { callback } = await inbox.reserveJob(sid, { handle: "big", command: "seq" });
    const before = await inbox.getSessionStats(sid);

    const t0 = performance.now();
    const uploaded = await uploadParts(
      { sessionId: "big", url: callback.url, token: callback.token, full, spool },
      new Set(),
      () => undefined,
      { log: () => undefined },
      new AbortController().signal,
    );
    const uploadMs = performance.now() - t0;
    if (uploaded.kind !== "uploaded") throw new Error(`upload: ${JSON.stringify(uploaded)}`);
    const afterUpload = await inbox.getSessionStats(sid);

    const t1 = performance.now();
    await postCompletion(callback, {
      status: "completed",
      exit_code: 0,
      output: "tail",
      output_truncated: true,
      output_bytes_total: size,
      full_output: full,
    });
    const completionMs = performance.now() - t1;
    const afterCompletion = await inbox.getSessionStats(sid);

    const url = `${dev.base}/v1/sessions/${sid}/exec-jobs/big/output`;
    const latencies: number[] = [];
    for (let i = 0; i < reads; i += 1) {
      const offset = Math.floor((((i * 7919) % 1000) / 1000) * (size - MIB));
      const started = performance.now();
      const response = await fetch(url, {
        headers: {
          authorization: `Bearer ${AGENT_TOKEN}`,
          range: `bytes=${offset}-${offset + MIB - 1}`,
        },
      });
      const bytes = (await response.arrayBuffer()).byteLength;
      latencies.push(performance.now() - started);
      if (response.status !== 206 || bytes !== MIB)
        throw new Error(`range read: ${response.status}`);
    }

    // Small completions: the path every output under the inline limit takes.
    const small: number[] = [];
    const smallSid = `${sid}-small`;
    await inbox.createSession({ id: smallSid });
    let smallRows = 0;
    for (let i = 0; i < smalls; i += 1) {
      const reserved = await inbox.reserveJob(smallSid, { handle: `s${i}`, command: "true" });
      const rowsBefore = (await inbox.getSessionStats(smallSid)).rows_written;
      const started = performance.now();
      await postCompletion(reserved.callback, { status: "completed", exit_code: 0, output: "ok" });
      small.push(performance.now() - started);
      smallRows += (await inbox.getSessionStats(smallSid)).rows_written - rowsBefore;
    }

    const parts = full.parts.length;
    const rowsUpload = afterUpload.rows_written - before.rows_written;
    const rowsCompletion = afterCompletion.rows_written - afterUpload.rows_written;
    // R2: a put per part (A), one list at completion (A); the sweep: one list (A) and one delete
    // batch (free) per 1,000 keys. A 1 MiB read touches one or two parts: one get each (B).
    const classA = parts + 1 + 1;
    const perMillion = {
      r2ClassA: classA * PRICE.r2ClassA,
      workerRequests: (parts + 1) * PRICE.workerRequest,
      doRequests: (2 * parts + 1) * PRICE.doRequest,
      rowsWritten: (rowsUpload + rowsCompletion) * PRICE.sqliteRowWritten,
      storageOneDay: (size / 1e9) * PRICE.r2GbMonth * (1 / 30) * 1e6,
    };
    const result = {
      output_mib: totalMib,
      parts,
      upload_mib_per_s: Number((totalMib / (uploadMs / 1000)).toFixed(1)),
      completion_ms: Number(completionMs.toFixed(1)),
      range_read_1mib_ms: {
        p50: Number(percentile(latencies, 50).toFixed(1)),
        p90: Number(percentile(latencies, 90).toFixed(1)),
        samples: reads,
      },
      rows_written: {
        upload: rowsUpload,
        per_part: rowsUpload / parts,
        completion: rowsCompletion,
      },
      r2_ops: { class_a: classA, class_b_per_1mib_read: "1-2" },
      usd_per_million_large_completions: Object.fromEntries(
        Object.entries(perMillion).map(([key, value]) => [key, Number(value.toFixed(2))]),
      ),
      small_completion_ms: {
        p50: Number(percentile(small, 50).toFixed(1)),
        p90: Number(percentile(small, 90).toFixed(1)),
        rows_written_each: smallRows / smalls,
        samples: smalls,
      },
    };
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await dev.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

await main();

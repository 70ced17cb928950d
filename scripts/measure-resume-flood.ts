// Issue 25, item 4, as a measurement: ten parallel unsigned 480 MiB POSTs to the example host's
// /resume, with the host's (and this client's) peak RSS. `npx tsx scripts/measure-resume-flood.ts`
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { scriptedModel, startExampleHost } from "@exec-inbox/ai-sdk";
import { freePort } from "../test/support/local-stack";

const PARALLEL = 10;
const OFFERED_BYTES = 480 * 1024 * 1024;
const stateDir = mkdtempSync(join(tmpdir(), "resume-flood-"));
// exec-inbox and the runner are never called: an unsigned body is refused before anything else.
const host = await startExampleHost({
  execInboxUrl: "http://127.0.0.1:9",
  agentToken: "unused",
  runnerUrl: "http://127.0.0.1:9",
  runnerToken: "unused",
  resumeSigningSecret: "whsec_Zm9yZ2VkLXNlY3JldC1mb3JnZWQtc2VjcmV0LTAxMjM=",
  stateDir,
  port: await freePort(),
  model: () => scriptedModel(),
});
const before = process.memoryUsage().rss;
let peak = before;
const sampler = setInterval(() => {
  peak = Math.max(peak, process.memoryUsage().rss);
}, 10);
const chunk = new Uint8Array(1024 * 1024).fill(0x20);

async function flood() {
  let offered = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      offered += chunk.byteLength;
      if (offered > OFFERED_BYTES) controller.close();
      else controller.enqueue(chunk);
    },
  });
  const started = performance.now();
  const answer = await fetch(`${host.url}/resume`, {
    method: "POST",
    body,
    duplex: "half",
  } as RequestInit);
  return { status: answer.status, ms: Math.round(performance.now() - started), offered };
}

const results = await Promise.all(Array.from({ length: PARALLEL }, flood));
clearInterval(sampler);
const mib = (bytes: number) => Math.round(bytes / (1024 * 1024));
console.log(
  JSON.stringify({
    statuses: results.map((result) => result.status),
    slowest_ms: Math.max(...results.map((result) => result.ms)),
    most_pulled_mib: mib(Math.max(...results.map((result) => result.offered))),
    rss_before_mib: mib(before),
    rss_peak_mib: mib(peak),
  }),
);
await host.close();
rmSync(stateDir, { recursive: true, force: true });

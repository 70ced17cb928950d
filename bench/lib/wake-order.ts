// The order of one wake's durable writes and messages, read with strace on the workerd process:
// which fsyncs come before the runner's 202 and before the resume POST leaves (part of
// `npm run bench -- syscalls`). Shows what the answers wait for, not only how many writes there are.
import { spawn } from "node:child_process";
import { startArrivalsHost } from "./arrivals-host";
import { serveExecInbox } from "./miniflare-stack";
import { say, table } from "./report";
import { execInboxSystem } from "./wake-systems";

/** What a traced line is, in the terms of the wake; null for lines that are none of these. */
function eventOf(line: string): string | null {
  if (/fsync\(\d+<[^>]*metadata\.sqlite-wal>/.test(line))
    return "fsync of workerd's alarm store (metadata.sqlite)";
  if (/fsync\(\d+<[^>]*SessionObject\/[0-9a-f]{64}\.sqlite-wal>/.test(line))
    return "fsync of the session object's database";
  if (/fsync\(\d+<[^>]*D1DatabaseObject/.test(line)) return "fsync of the index's D1 database";
  if (/write\(\d+<socket:[^>]*>, "HTTP\/1\.1 202/.test(line))
    return "the 202 to the runner is written";
  if (/write\(\d+<socket:[^>]*>, "POST \//.test(line))
    return "the resume POST to the host is written";
  return null;
}

const at = (line: string): number => {
  const [h = "0", m = "0", s = "0"] = (line.match(/\d\d:\d\d:\d\d\.\d+/)?.[0] ?? "").split(":");
  return (Number(h) * 3600 + Number(m) * 60 + Number(s)) * 1000;
};

/** Traces one wake (index off, after warm-up wakes) and prints its events in order. */
export async function wakeOrder(script: string, stateDir: string): Promise<void> {
  const host = await startArrivalsHost();
  const served = await serveExecInbox(script, stateDir, { INDEX_UPDATES: "off" });
  try {
    const system = execInboxSystem("order", served.directBase, host, () => served.pids);
    const keys = await system.prepare("order", 6);
    for (const key of keys.slice(0, 5)) {
      await system.wake(key);
      await system.resumedAt(key);
    }
    const traced: string[] = [];
    const tracer = spawn(
      "strace",
      [
        "-f",
        "-tt",
        "-y",
        "-e",
        "trace=fsync,fdatasync,write",
        ...served.pids.flatMap((pid) => ["-p", String(pid)]),
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    tracer.stderr.on("data", (chunk) => traced.push(String(chunk)));
    await new Promise((done) => setTimeout(done, 1000));
    const last = keys[5] as string;
    await system.wake(last);
    await system.resumedAt(last);
    await new Promise((done) => setTimeout(done, 500));
    tracer.kill("SIGINT");
    await new Promise((done) => tracer.once("exit", done));
    const events = traced
      .join("")
      .split("\n")
      .flatMap((line) => {
        const event = eventOf(line);
        return event === null ? [] : [{ event, ms: at(line) }];
      });
    const start = events[0]?.ms ?? 0;
    say("One wake under strace (index off), in order:");
    table(
      ["#", "event", "ms after the first"],
      events.map((entry, i) => [String(i + 1), entry.event, (entry.ms - start).toFixed(2)]),
    );
  } finally {
    await served.stop();
    await host.close();
  }
}

// Memory of the processes `wrangler dev` runs, read from `ps` (the soak and stress scripts).
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

/** MiB of a process's resident memory that is anonymous (heap, not file-backed pages). */
function anonMiB(pid: string): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kib = /^RssAnon:\s+(\d+)/m.exec(status)?.[1];
    return kib === undefined ? 0 : Math.round(Number(kib) / 1024);
  } catch {
    return 0;
  }
}

/**
 * Resident memory of wrangler dev's two workerd processes, in MiB: the one listening on the dev port
 * runs wrangler's own proxy (none of our code); the other runs exec-inbox.
 */
export function workerdRssMiB(
  groupId: number | undefined,
  devPort: string,
): { proxy: number; runtime: number; runtimeAnon: number } {
  const rss = { proxy: 0, runtime: 0, runtimeAnon: 0 };
  if (groupId === undefined) return rss;
  const table = execFileSync("ps", ["-o", "pid=,rss=,args=", "-g", String(groupId)], {
    encoding: "utf8",
  });
  for (const line of table.split("\n")) {
    const [, pid, kib, args] = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line) ?? [];
    if (pid === undefined || kib === undefined || args === undefined) continue;
    if (!args.includes("bin/workerd")) continue;
    const isProxy = args.includes(`entry=127.0.0.1:${devPort}`);
    rss[isProxy ? "proxy" : "runtime"] += Math.round(Number(kib) / 1024);
    if (!isProxy) rss.runtimeAnon += anonMiB(pid);
  }
  return rss;
}

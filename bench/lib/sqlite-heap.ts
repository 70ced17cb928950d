// Reads SQLite's own heap counter (what `sqlite3_memory_used()` returns) out of a running workerd
// process, without stopping it: the static `sqlite3Stat.nowValue[0]` read from /proc/<pid>/mem.
// Which process to read and what the figure means are the caller's.
import { execFileSync } from "node:child_process";
import { closeSync, openSync, readFileSync, readlinkSync, readSync } from "node:fs";

/** The symbol's offset in the binary, found once per binary (workerd ships its symbol table). */
const offsets = new Map<string, bigint | null>();

function statOffset(binary: string): bigint | null {
  if (!offsets.has(binary)) {
    let offset: bigint | null = null;
    try {
      const symbols = execFileSync("nm", [binary], { maxBuffer: 256 * 1024 * 1024 }).toString();
      const line = symbols.split("\n").find((row) => row.endsWith(" sqlite3Stat"));
      if (line !== undefined) offset = BigInt(`0x${line.split(" ")[0]}`);
    } catch {
      // No nm here: the figure is left out, not guessed.
    }
    offsets.set(binary, offset);
  }
  return offsets.get(binary) ?? null;
}

/**
 * Bytes SQLite holds in `pid` now and at most since start (`sqlite3Stat.nowValue[0]` and
 * `mxValue[0]`, 64-bit each, ten of each in the struct), or null when they cannot be read. The
 * counter covers every database of the process (each object's and the local D1), the same heap the
 * hard limit caps.
 */
export function sqliteHeap(pid: number): { used: number; highest: number } | null {
  try {
    const binary = readlinkSync(`/proc/${pid}/exe`);
    const offset = statOffset(binary);
    if (offset === null) return null;
    // A position-independent binary: its symbols are relative to the mapping at file offset 0.
    const base = readFileSync(`/proc/${pid}/maps`, "utf8")
      .split("\n")
      .map((row) => row.split(/\s+/))
      .find((fields) => fields[2] === "00000000" && fields[5] === binary)?.[0]
      ?.split("-")[0];
    if (base === undefined) return null;
    const at = BigInt(`0x${base}`) + offset;
    const buffer = Buffer.alloc(8 * 20);
    const mem = openSync(`/proc/${pid}/mem`, "r");
    try {
      readSync(mem, buffer, 0, buffer.length, at);
    } finally {
      closeSync(mem);
    }
    return { used: Number(buffer.readBigInt64LE(0)), highest: Number(buffer.readBigInt64LE(80)) };
  } catch {
    return null;
  }
}

/** SQLite's heap summed over `pids` (only those whose counter could be read), in bytes. */
export function sqliteHeapOf(pids: readonly number[]): number | null {
  const heaps = pids.map(sqliteHeap).filter((heap) => heap !== null);
  return heaps.length === 0 ? null : heaps.reduce((sum, heap) => sum + heap.used, 0);
}

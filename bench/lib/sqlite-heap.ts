// Reads SQLite's own heap counter (what `sqlite3_memory_used()` returns) and its heap limits out of
// a running workerd process, without stopping it: static variables of SQLite read from
// /proc/<pid>/mem. Which process to read and what the figures mean are the caller's.
import { execFileSync } from "node:child_process";
import { closeSync, openSync, readFileSync, readlinkSync, readSync } from "node:fs";

/** Symbols' offsets in a binary, found once per binary (workerd ships its symbol table). */
const symbolTables = new Map<string, Map<string, bigint>>();

function symbolOffset(binary: string, symbol: string): bigint | null {
  let table = symbolTables.get(binary);
  if (table === undefined) {
    table = new Map();
    try {
      const symbols = execFileSync("nm", [binary], { maxBuffer: 256 * 1024 * 1024 }).toString();
      for (const row of symbols.split("\n")) {
        const [address, , name] = row.split(" ");
        if ((name === "sqlite3Stat" || name === "mem0") && address !== undefined) {
          table.set(name, BigInt(`0x${address}`));
        }
      }
    } catch {
      // No nm here: the figures are left out, not guessed.
    }
    symbolTables.set(binary, table);
  }
  return table.get(symbol) ?? null;
}

/** `bytes` bytes of `pid`'s memory at `symbol` of its binary, or null when they cannot be read. */
function readSymbol(pid: number, symbol: string, bytes: number): Buffer | null {
  try {
    const binary = readlinkSync(`/proc/${pid}/exe`);
    const offset = symbolOffset(binary, symbol);
    if (offset === null) return null;
    // A position-independent binary: its symbols are relative to the mapping at file offset 0.
    const base = readFileSync(`/proc/${pid}/maps`, "utf8")
      .split("\n")
      .map((row) => row.split(/\s+/))
      .find((fields) => fields[2] === "00000000" && fields[5] === binary)?.[0]
      ?.split("-")[0];
    if (base === undefined) return null;
    const buffer = Buffer.alloc(bytes);
    const mem = openSync(`/proc/${pid}/mem`, "r");
    try {
      readSync(mem, buffer, 0, bytes, BigInt(`0x${base}`) + offset);
    } finally {
      closeSync(mem);
    }
    return buffer;
  } catch {
    return null;
  }
}

/**
 * Bytes SQLite holds in `pid` now and at most since start (`sqlite3Stat.nowValue[0]` and
 * `mxValue[0]`, 64-bit each, ten of each in the struct), or null when they cannot be read. The
 * counter covers every database of the process (each object's and the local D1), the same heap the
 * hard limit caps.
 */
export function sqliteHeap(pid: number): { used: number; highest: number } | null {
  const stat = readSymbol(pid, "sqlite3Stat", 8 * 20);
  if (stat === null) return null;
  return { used: Number(stat.readBigInt64LE(0)), highest: Number(stat.readBigInt64LE(80)) };
}

/**
 * SQLite's soft and hard heap limits in `pid`, in bytes, 0 meaning none (what
 * `sqlite3_soft_heap_limit64(-1)` and `sqlite3_hard_heap_limit64(-1)` return there): `mem0`'s
 * `alarmThreshold` and `hardLimit`, after its mutex pointer (SQLite's malloc.c). Null when they
 * cannot be read.
 */
export function sqliteLimits(pid: number): { soft: number; hard: number } | null {
  const mem0 = readSymbol(pid, "mem0", 8 * 3);
  if (mem0 === null) return null;
  return { soft: Number(mem0.readBigInt64LE(8)), hard: Number(mem0.readBigInt64LE(16)) };
}

/** SQLite's heap summed over `pids` (only those whose counter could be read), in bytes. */
export function sqliteHeapOf(pids: readonly number[]): number | null {
  const heaps = pids.map(sqliteHeap).filter((heap) => heap !== null);
  return heaps.length === 0 ? null : heaps.reduce((sum, heap) => sum + heap.used, 0);
}

// Which thrown errors mean "this session cannot be served right now" (503 `unavailable`, retried
// by the runner and the kit) rather than a bug (500 `internal`). Answering is app.ts's onError.

/**
 * SQLite failures that say nothing about the request: the process's SQLite heap is spent (workerd
 * caps it per process, every object's database together), or the object's database could not be
 * opened or written. The runtime puts the result code in the message ("out of memory: SQLITE_NOMEM").
 */
const STORAGE_FAILURES: readonly [RegExp, string][] = [
  [/SQLITE_NOMEM|out of memory/i, "storage out of memory"],
  [/SQLITE_(CANTOPEN|IOERR|FULL|BUSY|LOCKED)\b/, "storage could not be opened or written"],
];

/**
 * The reason, from a fixed set (never the error's own words, which can echo request data), when
 * `error` is one a later retry can get past; else null. Durable Object stubs mark an overloaded
 * object `overloaded` and a transient failure of the runtime `retryable`.
 */
export function unavailableReason(error: unknown): string | null {
  if (typeof error !== "object" || error === null) return null;
  const { message, overloaded, retryable } = error as {
    message?: unknown;
    overloaded?: unknown;
    retryable?: unknown;
  };
  const text = typeof message === "string" ? message : "";
  for (const [pattern, reason] of STORAGE_FAILURES) if (pattern.test(text)) return reason;
  if (overloaded === true || /Durable Object is overloaded/i.test(text)) return "object overloaded";
  // What the runtime says when its own machinery fails under the object, its message withheld:
  // past the heap ceiling, opening a new object's database fails this way, before any of our code
  // runs. Our own bugs reach here with their own messages.
  if (/^internal error; reference = \w+$/.test(text))
    return "the runtime could not open the object";
  if (retryable === true) return "transient failure of the session object";
  return null;
}

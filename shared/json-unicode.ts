// The rule that every string of a JSON body is Unicode text, and the walk that finds the first one
// that is not. Answering is left to callers (the Worker answers 422 before anything is stored).

// With the `u` flag a surrogate pair is one code point, so this matches only a lone surrogate.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** Where a parsed JSON value holds a lone surrogate: the path and what holds it. */
export interface LoneSurrogate {
  readonly path: string;
  readonly message: string;
}

const codeAt = (text: string, index: number): string =>
  `U+${text.charCodeAt(index).toString(16).toUpperCase().padStart(4, "0")}`;

/**
 * The first string or member name of `value` (as `JSON.parse` gives it) that holds a lone
 * surrogate, or null. JSON text may spell one as `\ud800`, but it is no Unicode scalar value:
 * UTF-8 storage cannot keep it (SQLite stores U+FFFD in its place), so what is read back, and an
 * identical retry compared with it, would differ from what was sent. Iterative, so any depth is safe.
 */
export function loneSurrogateIn(value: unknown): LoneSurrogate | null {
  const pending: { value: unknown; path: string[] }[] = [{ value, path: [] }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const at = next.path.length === 0 ? "(body)" : next.path.join(".");
    if (typeof next.value === "string") {
      const found = LONE_SURROGATE.exec(next.value);
      if (found !== null) {
        const where = `${codeAt(next.value, found.index)} at index ${found.index}`;
        return { path: at, message: `holds a lone surrogate (${where}): send Unicode text` };
      }
    } else if (Array.isArray(next.value)) {
      for (let index = next.value.length - 1; index >= 0; index -= 1) {
        pending.push({ value: next.value[index], path: [...next.path, String(index)] });
      }
    } else if (typeof next.value === "object" && next.value !== null) {
      const entries = Object.entries(next.value);
      for (const [name] of entries) {
        if (LONE_SURROGATE.test(name)) {
          return { path: at, message: "a member name holds a lone surrogate: send Unicode text" };
        }
      }
      for (let index = entries.length - 1; index >= 0; index -= 1) {
        const [name, member] = entries[index] ?? ["", null];
        pending.push({ value: member, path: [...next.path, name] });
      }
    }
  }
  return null;
}

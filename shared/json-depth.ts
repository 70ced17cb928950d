// The nesting limit of every JSON body the Worker, the runner and the agent kit accept, and the scan
// that enforces it on the text before anything walks the parsed value. Answering is left to callers.

/**
 * Arrays and objects may nest this deep (a top-level object is depth 1). Schema checks,
 * `JSON.stringify` and structured clone recurse, and a few thousand levels overflow the stack
 * (a 6 KB body was a 500); no wire shape of exec-inbox needs more than a handful, and 128 leaves
 * room for tool results and metadata that carry other JSON (serde_json's default is the same).
 */
export const MAX_JSON_DEPTH = 128;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;

/**
 * Where `text` (syntactically valid JSON) first nests deeper than `limit`: the offset of the
 * opening bracket or brace, or null when it never does. One pass, no recursion, so the scan itself
 * cannot overflow whatever the input.
 */
export function depthExceededAt(text: string, limit: number = MAX_JSON_DEPTH): number | null {
  let depth = 0;
  let inString = false;
  for (let offset = 0; offset < text.length; offset++) {
    const code = text.charCodeAt(offset);
    if (inString) {
      if (code === BACKSLASH) offset++;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) {
      inString = true;
    } else if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      depth++;
      if (depth > limit) return offset;
    } else if (code === CLOSE_BRACKET || code === CLOSE_BRACE) {
      depth--;
    }
  }
  return null;
}

/** The problem detail for a body that nests too deep, the same words on every route and program. */
export const depthDetail = (offset: number, limit: number = MAX_JSON_DEPTH): string =>
  `JSON nests deeper than ${limit} levels (arrays and objects) at position ${offset}; the limit is ${limit}`;

// What an operator reads is what is there: characters that reorder or hide text (bidirectional
// controls, zero-width marks) are shown as their code points. Which strings get this is the pages'.
import type { FC } from "hono/jsx";

/**
 * Bidirectional embeddings, overrides, isolates and marks (U+202E reverses what follows it), and
 * the zero-width characters that hide text between visible letters.
 */
const HIDDEN = /[\u061C\u200B-\u200F\u202A-\u202E\u2060-\u2069\uFEFF]/g;

const codePoint = (char: string): string =>
  `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;

/** The text with each such character replaced by `[U+XXXX]` (for text that is not markup). */
export const visibleText = (text: string): string =>
  text.replace(HIDDEN, (char) => `[${codePoint(char)}]`);

/** The text as markup: each such character a marked `[U+XXXX]`, everything else as it is. */
export const Visible: FC<{ text: string }> = ({ text }) => {
  const parts: unknown[] = [];
  let last = 0;
  for (const match of text.matchAll(HIDDEN)) {
    const at = match.index ?? 0;
    if (at > last) parts.push(text.slice(last, at));
    const name = codePoint(match[0]);
    parts.push(
      <span class="hidden-char" title={`${name}: a character that reorders or hides text`}>
        [{name}]
      </span>,
    );
    last = at + match[0].length;
  }
  if (last < text.length) parts.push(text.slice(last));
  return <>{parts}</>;
};

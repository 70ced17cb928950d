// The sessions an earlier example host kept as JSON files (`<encoded session id>.json` in its state
// directory), read once when the SQLite store is created there. The caller stores them.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { SessionRecord } from "./session-record";

/** Every `*.json` record in `dir`; a file that does not parse as one throws, naming it. */
export function readJsonConversations<M>(dir: string): Array<SessionRecord<M>> {
  // A `.tmp` file is a write that never reached its rename: the record before it is the `.json`.
  const names = readdirSync(dir).filter((name) => name.endsWith(".json"));
  return names.sort().map((name) => {
    const path = join(dir, name);
    let record: Partial<SessionRecord<M>>;
    try {
      record = JSON.parse(readFileSync(path, "utf8"));
    } catch (error) {
      throw new Error(`${path} (a conversation of the JSON-file host): ${String(error)}`, {
        cause: error,
      });
    }
    if (typeof record?.sessionId !== "string" || !Array.isArray(record.messages)) {
      throw new Error(
        `${path} (a conversation of the JSON-file host) has no sessionId or messages`,
      );
    }
    return record as SessionRecord<M>;
  });
}

// The runner's on-disk journal of armed callbacks and computed results (JSON lines, fsynced).
// Replaying it after a restart tells which completions still have to be sent.
import {
  appendFileSync,
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
} from "node:fs";
import { join } from "node:path";
import type { CompletionBody } from "./completion";

export type JournalRecord =
  | { type: "armed"; session_id: string; url: string; token: string; command: string; at: number }
  | { type: "result"; session_id: string; body: CompletionBody; at: number }
  | {
      type: "done";
      session_id: string;
      outcome: "delivered" | "refused";
      status: number;
      at: number;
    };

export interface PendingCallback {
  readonly sessionId: string;
  readonly url: string;
  readonly token: string;
  readonly command: string;
  readonly body: CompletionBody | null;
}

export class Journal {
  private readonly file: string;

  constructor(dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.file = join(dir, "callbacks.jsonl");
  }

  append(record: JournalRecord): void {
    // The journal holds callback tokens: owner-only, and on disk before anything is sent.
    const fd = openSync(this.file, "a", 0o600);
    try {
      appendFileSync(fd, `${JSON.stringify(record)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  records(): JournalRecord[] {
    if (!existsSync(this.file)) return [];
    return readFileSync(this.file, "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as JournalRecord];
        } catch {
          return []; // A line torn by a crash mid-write is skipped; its callback was not sent yet.
        }
      });
  }

  /** Callbacks armed but not yet delivered or refused, with their result when one was computed. */
  pending(): PendingCallback[] {
    const byId = new Map<string, PendingCallback>();
    for (const record of this.records()) {
      if (record.type === "armed") {
        byId.set(record.session_id, {
          sessionId: record.session_id,
          url: record.url,
          token: record.token,
          command: record.command,
          body: null,
        });
      } else if (record.type === "result") {
        const armed = byId.get(record.session_id);
        if (armed) byId.set(record.session_id, { ...armed, body: record.body });
      } else {
        byId.delete(record.session_id);
      }
    }
    return [...byId.values()];
  }

  highestSessionId(): number {
    return this.records().reduce((max, record) => Math.max(max, Number(record.session_id) || 0), 0);
  }
}

// The host's durable record of one session for OpenAI Agents JS: the run's item history (what
// `run()` continues from), the envelope ids applied to it, the resume ids taken, the running
// handles. One JSON file per session, replaced atomically (temp file, fsync, rename), so the items
// and the ids that say they were applied are written together or not at all.
import { mkdir, open, readFile, rename } from "node:fs/promises";
import { join } from "node:path";
import type { AgentInputItem } from "@openai/agents";

/** Persisted as JSON: evolve by adding optional fields. */
export interface SessionRecord {
  readonly sessionId: string;
  readonly lifetime: string | null;
  readonly history: AgentInputItem[];
  readonly applied: string[];
  readonly resumes: string[];
  readonly running: string[];
  readonly activeRunId: string | null;
  /** Items were added since the model last answered: a turn is owed (also after a crash). */
  readonly turnOwed: boolean;
}

export const emptyRecord = (sessionId: string): SessionRecord => ({
  sessionId,
  lifetime: null,
  history: [],
  applied: [],
  resumes: [],
  running: [],
  activeRunId: null,
  turnOwed: false,
});

const fileName = (sessionId: string): string => `${encodeURIComponent(sessionId)}.json`;

export class SessionStore {
  constructor(private readonly dir: string) {}

  async load(sessionId: string): Promise<SessionRecord> {
    try {
      return JSON.parse(await readFile(join(this.dir, fileName(sessionId)), "utf8"));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return emptyRecord(sessionId);
      throw error;
    }
  }

  async save(record: SessionRecord): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const target = join(this.dir, fileName(record.sessionId));
    const temp = `${target}.${process.pid}.tmp`;
    const file = await open(temp, "w");
    try {
      await file.writeFile(JSON.stringify(record));
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temp, target);
  }
}

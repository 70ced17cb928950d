// The agent host's durable record of one session: the model conversation and what the kit needs to
// recover after a crash. The file store writes each record atomically (temp file, fsync, rename,
// fsync of the directory). One process per store directory: records are not locked across processes.
import { mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import type { ModelMessage } from "ai";

/** The run the kit is driving, kept so a restarted host can finish it (persisted: add fields only). */
export interface ActiveRun {
  readonly runId: string;
  /** The resume that started it, or null for a human message. */
  readonly resumeId: string | null;
  /** Latest lease end of the claims this run made: a restarted host re-claims after it. */
  readonly leaseExpiresAt: number;
  /** A human message not yet answered by a stored turn. */
  readonly pendingUserText: string | null;
}

/** Persisted as JSON, one file per session; evolve by adding optional fields. */
export interface SessionRecord<M = ModelMessage> {
  readonly sessionId: string;
  /** The exec-inbox lifetime this conversation belongs to: a resume of another one is refused (404). */
  readonly lifetime: string;
  /** The conversation in the turn engine's own terms (the AI SDK's `ModelMessage`s by default). */
  readonly messages: M[];
  /** Background handles the model started and has not yet seen end. */
  readonly running: string[];
  /** Inbox envelope ids already put into `messages` (the model sees each once). */
  readonly applied: string[];
  /** `webhook-id`s (= resume ids) received, newest last, bounded. */
  readonly resumes: string[];
  /** A resume received and not yet taken by a registered run. */
  readonly pendingResume: string | null;
  readonly activeRun: ActiveRun | null;
}

export interface ConversationStore<M = ModelMessage> {
  load(sessionId: string): Promise<SessionRecord<M> | undefined>;
  save(record: SessionRecord<M>): Promise<void>;
  delete(sessionId: string): Promise<void>;
  list(): Promise<string[]>;
}

/** Session ids are `[A-Za-z0-9._:-]`; `:` is kept out of file names. */
const fileName = (sessionId: string): string => `${encodeURIComponent(sessionId)}.json`;

export class FileConversationStore<M = ModelMessage> implements ConversationStore<M> {
  constructor(private readonly dir: string) {}

  async load(sessionId: string): Promise<SessionRecord<M> | undefined> {
    try {
      return JSON.parse(await readFile(join(this.dir, fileName(sessionId)), "utf8"));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
  }

  async save(record: SessionRecord<M>): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const target = join(this.dir, fileName(record.sessionId));
    const temp = `${target}.${process.pid}.${Date.now()}.tmp`;
    const handle = await open(temp, "w", 0o600);
    try {
      await handle.writeFile(JSON.stringify(record));
      // The rename is the commit point: a crash leaves the old record or the new one, never half.
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, target);
    // The rename itself is durable only once the directory is synced.
    const dir = await open(this.dir, "r");
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  }

  async delete(sessionId: string): Promise<void> {
    await rm(join(this.dir, fileName(sessionId)), { force: true });
  }

  async list(): Promise<string[]> {
    try {
      return (await readdir(this.dir))
        .filter((name) => name.endsWith(".json"))
        .map((name) => decodeURIComponent(name.slice(0, -".json".length)));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
  }
}

// The example host's conversation store: one SQLite database under the host's state directory,
// a transaction per stored turn, crash-safe against a SIGKILL of the host process.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { ModelMessage } from "ai";
import { afterEach, describe, expect, it } from "vitest";
import {
  CONVERSATION_DATABASE,
  type SessionRecord,
  SqliteConversationStore,
} from "../../agent/conversation-store";
import { CHILD_SESSION, conversation } from "./conversation-store-child";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const TSX = pathToFileURL(join(ROOT, "node_modules/tsx/dist/loader.mjs")).href;
const CHILD = join(ROOT, "test/e2e/conversation-store-child.ts");

const dirs: string[] = [];
const stores: SqliteConversationStore[] = [];
afterEach(() => {
  for (const store of stores.splice(0)) store.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function stateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "conversation-store-"));
  dirs.push(dir);
  return dir;
}

function open(dir: string): SqliteConversationStore {
  const store = new SqliteConversationStore(dir);
  stores.push(store);
  return store;
}

/** The child on this Node (the project's Node 24), in its own process: `args` as its argv. */
function runChild(args: string[]) {
  const child = spawn(process.execPath, ["--import", TSX, CHILD, ...args], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

describe("the example host's conversation store", () => {
  it("a stored turn survives the host process being SIGKILLed right after the store call returns", async () => {
    const dir = stateDir();
    const child = runChild([dir, "kill-after-store", "3"]);
    const exit = await child.exited;
    expect(exit, child.stderr()).toEqual({ code: null, signal: "SIGKILL" });
    // No warning (an ExperimentalWarning of node:sqlite, say) reached the host's output.
    expect(child.stderr()).toBe("");
    expect(await open(dir).load(CHILD_SESSION)).toEqual(conversation(CHILD_SESSION, 3));
  });

  it("a SIGKILL while a turn is being stored leaves the turn before it or the whole turn, never part of one", async () => {
    const dir = stateDir();
    const child = runChild([dir, "store-forever", String(256 * 1024)]);
    // Killed once a few turns are stored, wherever the next one is: any moment must do.
    await new Promise<void>((resolve, reject) => {
      child.child.stdout.on("data", () => {
        if (child.stdout().includes("stored 3\n")) resolve();
      });
      void child.exited.then(() => reject(new Error(`child ended early: ${child.stderr()}`)));
    });
    child.child.kill("SIGKILL");
    await child.exited;
    const record = await open(dir).load(CHILD_SESSION);
    const turns = (record?.messages.length ?? 0) / 2;
    expect(turns).toBeGreaterThanOrEqual(3);
    expect(record).toEqual(conversation(CHILD_SESSION, turns, 256 * 1024));
  });

  it("two turns stored concurrently for the same session both land, in order", async () => {
    const store = open(stateDir());
    await store.save(conversation("s", 1));
    // Neither call waits for the other: the second turn, stored after the first, is what stays.
    await Promise.all([store.save(conversation("s", 2)), store.save(conversation("s", 3))]);
    expect(await store.load("s")).toEqual(conversation("s", 3));
    await Promise.all([
      store.save(conversation("s", 4)),
      store.save(conversation("t", 1)),
      store.save(conversation("s", 5)),
    ]);
    expect(await store.load("s")).toEqual(conversation("s", 5));
    expect(await store.load("t")).toEqual(conversation("t", 1));
  });

  it("a conversation of 2,000 turns and about 4 MiB, grown a hundred turns at a time, round-trips through a restart", async () => {
    const dir = stateDir();
    const store = open(dir);
    for (let turns = 100; turns <= 2_000; turns += 100) {
      await store.save(conversation("big", turns, 2_000));
    }
    const expected = conversation("big", 2_000, 2_000);
    expect(JSON.stringify(expected.messages).length).toBeGreaterThan(4_000_000);
    expect(await store.load("big")).toEqual(expected);
    store.close();
    expect(await open(dir).load("big")).toEqual(expected);
  });

  it("a conversation the turn engine rewrote (an earlier message changed, or fewer messages) is stored as given", async () => {
    const store = open(stateDir());
    await store.save(conversation("s", 10));
    const changed = conversation("s", 12);
    changed.messages[3] = { role: "assistant", content: "a compacted summary" };
    await store.save(changed);
    expect(await store.load("s")).toEqual(changed);
    const shorter = { ...conversation("s", 2), messages: changed.messages.slice(0, 3) };
    await store.save(shorter);
    expect(await store.load("s")).toEqual(shorter);
    await store.save(conversation("s", 0));
    expect(await store.load("s")).toEqual(conversation("s", 0));
  });

  it("keeps fields a host added to its records, lists the stored sessions and forgets a deleted one whole", async () => {
    const dir = stateDir();
    const store = open(dir);
    const extended = { ...conversation("a:1", 2), note: "kept" } as SessionRecord<ModelMessage>;
    await store.save(extended);
    await store.save(conversation("b.2", 1));
    expect((await store.list()).sort()).toEqual(["a:1", "b.2"]);
    await store.delete("a:1");
    await store.delete("never-stored");
    expect(await store.list()).toEqual(["b.2"]);
    expect(await store.load("a:1")).toBeUndefined();
    store.close();
    const raw = new DatabaseSync(join(dir, CONVERSATION_DATABASE));
    try {
      // The deleted session's messages went with it, not only its row.
      expect(raw.prepare("SELECT count(*) AS n FROM messages").get()).toEqual({ n: 2 });
      expect(raw.prepare("PRAGMA user_version").get()).toEqual({ user_version: 1 });
    } finally {
      raw.close();
    }
    const reopened = open(dir);
    expect(await reopened.load("b.2")).toEqual(conversation("b.2", 1));
  });

  it("the database is readable by its owner only, as the conversations may hold command output", async () => {
    const dir = stateDir();
    await open(dir).save(conversation("s", 1));
    expect(statSync(join(dir, CONVERSATION_DATABASE)).mode & 0o777).toBe(0o600);
  });

  it("a file that is not a SQLite database stops the store at start, naming the file", () => {
    const dir = stateDir();
    writeFileSync(
      join(dir, CONVERSATION_DATABASE),
      "these are not the pages you are looking for\n",
    );
    expect(() => open(dir)).toThrow(/conversations\.sqlite.*not a database/s);
  });

  it("a database with a damaged page stops the store at start instead of losing conversations", async () => {
    const dir = stateDir();
    const store = open(dir);
    for (let s = 0; s < 20; s++) await store.save(conversation(`s${s}`, 20, 1_000));
    store.close();
    const path = join(dir, CONVERSATION_DATABASE);
    const bytes = readFileSync(path);
    // Page 3 onwards (4 KiB pages): table and index pages, their headers overwritten.
    bytes.fill(0xa5, 2 * 4096, 6 * 4096);
    writeFileSync(path, bytes);
    expect(() => open(dir)).toThrow(/conversations\.sqlite.*(malformed|corrupt|integrity)/is);
  });

  it("a database written by a newer host (a higher user_version) is refused, not rewritten", async () => {
    const dir = stateDir();
    await open(dir).save(conversation("s", 1));
    stores.pop()?.close();
    const raw = new DatabaseSync(join(dir, CONVERSATION_DATABASE));
    raw.exec("PRAGMA user_version = 99");
    raw.close();
    expect(() => open(dir)).toThrow(/conversations\.sqlite.*version 99/s);
  });

  it("the JSON files of the earlier host are imported once, at the first start", async () => {
    const dir = stateDir();
    // As the JSON-file host wrote them: one `<encoded session id>.json` per session.
    const first = conversation("team:alpha", 3);
    const second = conversation("beta", 1);
    writeFileSync(join(dir, `${encodeURIComponent(first.sessionId)}.json`), JSON.stringify(first));
    writeFileSync(join(dir, "beta.json"), JSON.stringify(second));
    // A temp file of a write that never reached its rename: not a stored record.
    writeFileSync(join(dir, "beta.json.123.456.tmp"), "{ half");
    const store = open(dir);
    expect(store.imported).toBe(2);
    expect(await store.load("team:alpha")).toEqual(first);
    expect(await store.load("beta")).toEqual(second);
    await store.delete("beta");
    store.close();
    // Imported once: a later start does not bring a deleted session back from its old file.
    const again = open(dir);
    expect(again.imported).toBe(0);
    expect((await again.list()).sort()).toEqual(["team:alpha"]);
  });

  it("a JSON file of the earlier host that does not parse stops the first start, naming the file, and imports nothing", async () => {
    const dir = stateDir();
    writeFileSync(join(dir, "good.json"), JSON.stringify(conversation("good", 1)));
    writeFileSync(join(dir, "bad.json"), '{"sessionId": "bad", "messages": [');
    expect(() => open(dir)).toThrow(/bad\.json/);
    rmSync(join(dir, "bad.json"));
    const store = open(dir);
    expect(store.imported).toBe(1);
    expect(await store.list()).toEqual(["good"]);
  });
});

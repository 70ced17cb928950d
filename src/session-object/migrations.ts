// The ordered, frozen list of schema migrations of a session object's SQLite database.
// A shipped entry is never edited: a change is a new entry appended at the end.

export interface Migration {
  readonly id: number;
  readonly description: string;
  readonly sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    description: "session row, messages, jobs, inbox items and purged handles",
    sql: `
      CREATE TABLE session (
        singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
        id TEXT NOT NULL,
        lifetime TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        resume_url TEXT,
        metadata TEXT NOT NULL,
        run TEXT,
        wait TEXT,
        resume TEXT,
        notify_seq INTEGER NOT NULL,
        generation INTEGER NOT NULL
      );
      CREATE TABLE messages (
        idx INTEGER PRIMARY KEY,
        role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system', 'tool')),
        content TEXT NOT NULL,
        metadata TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );
      CREATE TABLE jobs (
        handle TEXT PRIMARY KEY,
        command TEXT NOT NULL,
        lifetime TEXT NOT NULL,
        reserved_at INTEGER NOT NULL,
        callback_token TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'killed', 'lost')),
        exit_code INTEGER,
        output TEXT,
        output_truncated INTEGER,
        output_bytes_total INTEGER,
        ended_by TEXT CHECK (ended_by IN ('process', 'runner_timeout', 'runner_shutdown', 'kill_request')),
        completed_at INTEGER,
        generation INTEGER
      );
      CREATE TABLE inbox (
        id TEXT PRIMARY KEY,
        generation INTEGER NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('pending', 'claimed', 'acked')),
        lease_expires_at INTEGER,
        acked_at INTEGER,
        envelope TEXT NOT NULL
      );
      CREATE TABLE purged (handle TEXT PRIMARY KEY, purged_at INTEGER NOT NULL);
    `,
  },
];

export function migrate(sql: SqlStorage, migrations: readonly Migration[] = MIGRATIONS): void {
  sql.exec(
    "CREATE TABLE IF NOT EXISTS _migrations (id INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)",
  );
  const applied = sql
    .exec<{ id: number }>("SELECT COALESCE(MAX(id), 0) AS id FROM _migrations")
    .one().id;
  for (const migration of migrations) {
    if (migration.id <= applied) continue;
    sql.exec(migration.sql);
    sql.exec("INSERT INTO _migrations (id, applied_at) VALUES (?, ?)", migration.id, Date.now());
  }
}

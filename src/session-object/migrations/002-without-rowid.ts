// Migration 2, shipped and frozen: never edited (a change is a new migration appended).
import type { Migration } from "./migration";

export const MIGRATION_2: Migration = {
  id: 2,
  description: "jobs, inbox and purged become WITHOUT ROWID: a write is one billed row, not two",
  sql: `
      CREATE TABLE jobs_v2 (
        handle TEXT NOT NULL PRIMARY KEY,
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
      ) WITHOUT ROWID;
      INSERT INTO jobs_v2 (handle, command, lifetime, reserved_at, callback_token, status, exit_code, output,
        output_truncated, output_bytes_total, ended_by, completed_at, generation)
        SELECT handle, command, lifetime, reserved_at, callback_token, status, exit_code, output,
        output_truncated, output_bytes_total, ended_by, completed_at, generation FROM jobs;
      DROP TABLE jobs;
      ALTER TABLE jobs_v2 RENAME TO jobs;
      CREATE TABLE inbox_v2 (
        id TEXT NOT NULL PRIMARY KEY,
        generation INTEGER NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('pending', 'claimed', 'acked')),
        lease_expires_at INTEGER,
        acked_at INTEGER,
        envelope TEXT NOT NULL
      ) WITHOUT ROWID;
      INSERT INTO inbox_v2 (id, generation, state, lease_expires_at, acked_at, envelope)
        SELECT id, generation, state, lease_expires_at, acked_at, envelope FROM inbox;
      DROP TABLE inbox;
      ALTER TABLE inbox_v2 RENAME TO inbox;
      CREATE TABLE purged_v2 (handle TEXT NOT NULL PRIMARY KEY, purged_at INTEGER NOT NULL) WITHOUT ROWID;
      INSERT INTO purged_v2 (handle, purged_at) SELECT handle, purged_at FROM purged;
      DROP TABLE purged;
      ALTER TABLE purged_v2 RENAME TO purged;
    `,
};

// Migration 1, shipped and frozen: never edited (a change is a new migration appended).
import type { Migration } from "./migration";

export const MIGRATION_1: Migration = {
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
};

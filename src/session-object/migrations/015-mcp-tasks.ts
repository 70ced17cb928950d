// Migration 15, shipped and frozen: never edited (a change is a new migration appended).
import type { Migration } from "./migration";

export const MIGRATION_15: Migration = {
  id: 15,
  description:
    "MCP tasks: each task-augmented exec_command is a row naming its job (or holding the answer of a command that ended within its yield), numbered in creation order, marked when cancelled",
  // A task's state is read from its job at every request; the row keeps only what the job does
  // not: its id, its order, an answer no job holds, and the client's cancel.
  sql: `
      CREATE TABLE mcp_tasks (
        task_id TEXT PRIMARY KEY,
        seq INTEGER NOT NULL UNIQUE,
        handle TEXT,
        result TEXT,
        created_at INTEGER NOT NULL,
        cancelled_at INTEGER,
        CHECK ((handle IS NULL) <> (result IS NULL))
      );
    `,
};

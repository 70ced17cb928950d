// Migration 15, shipped and frozen: never edited (a change is a new migration appended).
import type { Migration } from "./migration";

export const MIGRATION_15: Migration = {
  id: 15,
  description:
    "MCP tasks and jobs: each task-augmented exec_command is a row naming its job (or holding the answer of a command that ended within its yield), numbered in creation order, marked when cancelled; each job exec_command started keeps the runner's own id and which runner started it",
  // A task's state is read from its job at every request; the row keeps only what the job does
  // not: its id, its order, an answer no job holds, and the client's cancel. A job's handle is the
  // runner's id unless the session already held that id (a replaced runner numbers again): then
  // \`mcp_jobs\` keeps the runner's id, and the runner (its \`seq\`) that may be asked about it; \`superseded\` marks a job whose id that
  // same runner has since given a newer command, so the runner is never asked about it again.
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
      CREATE TABLE mcp_jobs (
        handle TEXT PRIMARY KEY,
        runner_id TEXT NOT NULL,
        runner_seq INTEGER NOT NULL,
        superseded INTEGER NOT NULL DEFAULT 0 CHECK (superseded IN (0, 1))
      ) WITHOUT ROWID;
    `,
};

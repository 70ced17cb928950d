// Migration 7, shipped and frozen: never edited (a change is a new migration appended).
import type { Migration } from "./migration";

export const MIGRATION_7: Migration = {
  id: 7,
  description:
    "liveness: jobs get a heartbeat timeout, deadline, progress and cancel request (before the output, which stays last); new ended_by values; the session keeps its earliest deadline; the trail records cancels",
  // The deadline moves with every heartbeat, so no index holds it (an index entry rewritten per
  // heartbeat would be a second billed row): the timer walks the running jobs by a partial index
  // that a heartbeat never touches. A finished job keeps no deadline and no progress.
  sql: `
      ALTER TABLE session ADD COLUMN liveness_due_at INTEGER;
      CREATE TABLE jobs_v7 (
        seq INTEGER PRIMARY KEY,
        handle TEXT NOT NULL UNIQUE,
        command TEXT NOT NULL,
        lifetime TEXT NOT NULL,
        reserved_at INTEGER NOT NULL,
        callback_token TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'killed', 'lost')),
        exit_code INTEGER,
        output_truncated INTEGER CHECK (output_truncated IN (0, 1)),
        output_bytes_total INTEGER,
        ended_by TEXT CHECK (ended_by IN ('process', 'runner_timeout', 'runner_shutdown', 'kill_request',
          'memory_limit', 'pids_limit', 'output_limit', 'disk_limit', 'operator', 'heartbeat_timeout')),
        completed_at INTEGER,
        generation INTEGER,
        heartbeat_timeout_ms INTEGER,
        last_heartbeat_at INTEGER,
        deadline_at INTEGER,
        grace_for INTEGER,
        cancel_requested INTEGER NOT NULL DEFAULT 0 CHECK (cancel_requested IN (0, 1)),
        progress_at INTEGER,
        progress_bytes INTEGER,
        progress_tail TEXT,
        output TEXT,
        CHECK (IFNULL(CASE WHEN status = 'running'
          THEN exit_code IS NULL AND output_truncated IS NULL AND output_bytes_total IS NULL
            AND ended_by IS NULL AND completed_at IS NULL AND generation IS NULL AND output IS NULL
            AND (deadline_at IS NULL) = (heartbeat_timeout_ms IS NULL)
            AND (progress_at IS NULL) = (progress_tail IS NULL)
          ELSE completed_at IS NOT NULL AND output_truncated IS NOT NULL
            AND output_bytes_total IS NOT NULL AND output IS NOT NULL
            AND deadline_at IS NULL AND progress_at IS NULL AND progress_tail IS NULL END, 0))
      );
      INSERT INTO jobs_v7 (seq, handle, command, lifetime, reserved_at, callback_token, status, exit_code,
        output_truncated, output_bytes_total, ended_by, completed_at, generation, output)
        SELECT seq, handle, command, lifetime, reserved_at, callback_token, status, exit_code,
          output_truncated, output_bytes_total, ended_by, completed_at, generation, output FROM jobs;
      DROP TABLE jobs;
      ALTER TABLE jobs_v7 RENAME TO jobs;
      CREATE INDEX jobs_by_completion ON jobs (completed_at) WHERE completed_at IS NOT NULL;
      CREATE INDEX jobs_running ON jobs (seq) WHERE completed_at IS NULL;
      CREATE TABLE audit_v7 (
        slot INTEGER PRIMARY KEY,
        seq INTEGER NOT NULL,
        at INTEGER NOT NULL,
        type TEXT NOT NULL CHECK (type IN ('completion', 'delivery', 'run_registered', 'run_suspended',
          'run_finished', 'claim', 'ack', 'ceiling', 'operator', 'cancel')),
        detail TEXT NOT NULL
      );
      INSERT INTO audit_v7 (slot, seq, at, type, detail) SELECT slot, seq, at, type, detail FROM audit;
      DROP TABLE audit;
      ALTER TABLE audit_v7 RENAME TO audit;
    `,
};

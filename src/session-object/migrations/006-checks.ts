// Migration 6, shipped and frozen: never edited (a change is a new migration appended).
import { DEFAULT_CLAIM_TIMEOUT_MS, type Migration, NOW_MS } from "./migration";

export const MIGRATION_6: Migration = {
  id: 6,
  description:
    "CHECKs mirror the Job and Resume unions of domain/state.ts: a running job has no result, a finished one its completion time; a resume has exactly its state's fields",
  // SQLite adds a CHECK only by rebuilding the table. Rows written before are first brought to
  // the union's shape (a field of another state dropped, a missing time taken from the nearest
  // one recorded), so an upgrade never refuses data the old code wrote. A finished job without
  // its completion time gets the migration's time, not its reservation's: an old one would be
  // purged at once. A delivered resume without its next attempt waits the claim timeout from
  // now, as a fresh delivery would, instead of being redelivered at once. IFNULL(…, 0) makes
  // a missing field fail the check: a CHECK that evaluates to NULL would pass.
  sql: `
      CREATE TABLE jobs_v6 (
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
        ended_by TEXT CHECK (ended_by IN ('process', 'runner_timeout', 'runner_shutdown', 'kill_request', 'operator')),
        completed_at INTEGER,
        generation INTEGER,
        output TEXT,
        CHECK (IFNULL(CASE WHEN status = 'running'
          THEN exit_code IS NULL AND output_truncated IS NULL AND output_bytes_total IS NULL
            AND ended_by IS NULL AND completed_at IS NULL AND generation IS NULL AND output IS NULL
          ELSE completed_at IS NOT NULL AND output_truncated IS NOT NULL
            AND output_bytes_total IS NOT NULL AND output IS NOT NULL END, 0))
      );
      INSERT INTO jobs_v6 (seq, handle, command, lifetime, reserved_at, callback_token, status, exit_code,
        output_truncated, output_bytes_total, ended_by, completed_at, generation, output)
        SELECT seq, handle, command, lifetime, reserved_at, callback_token, status,
          CASE WHEN status = 'running' THEN NULL ELSE exit_code END,
          CASE WHEN status = 'running' THEN NULL ELSE COALESCE(output_truncated, 0) END,
          CASE WHEN status = 'running' THEN NULL
            ELSE COALESCE(output_bytes_total, octet_length(COALESCE(output, ''))) END,
          CASE WHEN status = 'running' THEN NULL ELSE ended_by END,
          CASE WHEN status = 'running' THEN NULL ELSE COALESCE(completed_at, ${NOW_MS}) END,
          CASE WHEN status = 'running' THEN NULL ELSE generation END,
          CASE WHEN status = 'running' THEN NULL ELSE COALESCE(output, '') END
        FROM jobs;
      DROP TABLE jobs;
      ALTER TABLE jobs_v6 RENAME TO jobs;
      CREATE INDEX jobs_by_completion ON jobs (completed_at) WHERE completed_at IS NOT NULL;

      CREATE TABLE session_v6 (
        singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
        id TEXT NOT NULL,
        lifetime TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        resume_url TEXT,
        metadata TEXT NOT NULL,
        run TEXT,
        wait TEXT,
        resume TEXT CHECK (resume IS NULL OR IFNULL(
          json_type(resume, '$.resumeId') = 'text'
          AND json_extract(resume, '$.reason') IN ('background_exec_completed',
            'background_exec_wait_expired', 'background_exec_outcome_unknown', 'inbox_pending')
          AND json_type(resume, '$.attempts') = 'integer'
          AND json_type(resume, '$.createdAt') = 'integer'
          AND CASE json_extract(resume, '$.state')
            WHEN 'scheduled' THEN json_type(resume, '$.nextAttemptAt') = 'integer'
              AND json_type(resume, '$.deliveredAt') IS NULL AND json_type(resume, '$.endedAt') IS NULL
            WHEN 'delivered' THEN json_type(resume, '$.nextAttemptAt') = 'integer'
              AND json_type(resume, '$.deliveredAt') = 'integer' AND json_type(resume, '$.endedAt') IS NULL
            WHEN 'no_target' THEN json_type(resume, '$.nextAttemptAt') IS NULL
              AND json_type(resume, '$.deliveredAt') IN ('integer', 'null') AND json_type(resume, '$.endedAt') IS NULL
            WHEN 'completed' THEN json_type(resume, '$.nextAttemptAt') IS NULL
              AND json_type(resume, '$.deliveredAt') IN ('integer', 'null') AND json_type(resume, '$.endedAt') = 'integer'
            WHEN 'failed' THEN json_type(resume, '$.nextAttemptAt') IS NULL
              AND json_type(resume, '$.deliveredAt') IN ('integer', 'null') AND json_type(resume, '$.endedAt') = 'integer'
            ELSE 0 END, 0)),
        notify_seq INTEGER NOT NULL,
        generation INTEGER NOT NULL,
        job_seq INTEGER NOT NULL DEFAULT 0,
        tenant TEXT NOT NULL DEFAULT 'default'
      );
      INSERT INTO session_v6 (singleton, id, lifetime, created_at, resume_url, metadata, run, wait, resume,
        notify_seq, generation, job_seq, tenant)
        SELECT singleton, id, lifetime, created_at, resume_url, metadata, run, wait,
          CASE json_extract(resume, '$.state')
            WHEN 'scheduled' THEN json_remove(json_set(resume, '$.nextAttemptAt',
                COALESCE(json_extract(resume, '$.nextAttemptAt'), json_extract(resume, '$.createdAt'))),
              '$.deliveredAt', '$.endedAt')
            WHEN 'delivered' THEN json_remove(json_set(resume,
                '$.nextAttemptAt', COALESCE(json_extract(resume, '$.nextAttemptAt'),
                  ${NOW_MS} + ${DEFAULT_CLAIM_TIMEOUT_MS}),
                '$.deliveredAt', COALESCE(json_extract(resume, '$.deliveredAt'),
                  json_extract(resume, '$.lastAttemptAt'), json_extract(resume, '$.createdAt'))),
              '$.endedAt')
            WHEN 'no_target' THEN json_remove(json_set(resume,
                '$.deliveredAt', json_extract(resume, '$.deliveredAt')), '$.nextAttemptAt', '$.endedAt')
            ELSE json_remove(json_set(resume,
                '$.deliveredAt', json_extract(resume, '$.deliveredAt'),
                '$.endedAt', COALESCE(json_extract(resume, '$.endedAt'),
                  json_extract(resume, '$.lastAttemptAt'), json_extract(resume, '$.createdAt'))),
              '$.nextAttemptAt')
          END,
          notify_seq, generation, job_seq, tenant
        FROM session;
      DROP TABLE session;
      ALTER TABLE session_v6 RENAME TO session;
    `,
};

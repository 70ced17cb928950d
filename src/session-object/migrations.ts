// The ordered, frozen list of schema migrations of a session object's SQLite database, and the
// road a database takes to the newest. A shipped entry is never edited: a change is a new entry
// appended at the end. The list is the schema's only source: a new database runs the snapshot
// generated from it (schema.generated.ts), the same schema in one step.

import { SCHEMA_SNAPSHOT } from "./schema.generated";

interface Migration {
  readonly id: number;
  readonly description: string;
  readonly sql: string;
}

/** The migration's own time, in ms: what a backfilled time takes, so no row looks old and is purged. */
const NOW_MS = "CAST(unixepoch('subsec') * 1000 AS INTEGER)";
/** The default claim timeout (config.ts): a migration cannot read a deployment's own setting. */
const DEFAULT_CLAIM_TIMEOUT_MS = 10 * 60 * 1000;

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
  {
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
  },
  {
    id: 3,
    description:
      "jobs and inbox become rowid tables (big columns last); jobs get a reservation seq bound into callback tokens; indexes for pages and due times",
    // A WITHOUT ROWID table keeps the whole row in its b-tree key, and SQLite reads an overflowing
    // key in full to compare it: every lookup or insert next to a job with a 256 KiB output read
    // 256 KiB (measured: ~0.6 ms a row). In a rowid table the key is the integer alone and the big
    // column, kept last, is read only when selected.
    sql: `
      ALTER TABLE session ADD COLUMN job_seq INTEGER NOT NULL DEFAULT 0;
      CREATE TABLE jobs_v3 (
        seq INTEGER PRIMARY KEY,
        handle TEXT NOT NULL UNIQUE,
        command TEXT NOT NULL,
        lifetime TEXT NOT NULL,
        reserved_at INTEGER NOT NULL,
        callback_token TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'killed', 'lost')),
        exit_code INTEGER,
        output_truncated INTEGER,
        output_bytes_total INTEGER,
        ended_by TEXT CHECK (ended_by IN ('process', 'runner_timeout', 'runner_shutdown', 'kill_request', 'operator')),
        completed_at INTEGER,
        generation INTEGER,
        output TEXT
      );
      INSERT INTO jobs_v3 (seq, handle, command, lifetime, reserved_at, callback_token, status, exit_code,
        output_truncated, output_bytes_total, ended_by, completed_at, generation, output)
        SELECT ROW_NUMBER() OVER (ORDER BY reserved_at, handle), handle, command, lifetime, reserved_at,
        callback_token, status, exit_code, output_truncated, output_bytes_total, ended_by, completed_at,
        generation, output FROM jobs;
      DROP TABLE jobs;
      ALTER TABLE jobs_v3 RENAME TO jobs;
      UPDATE session SET job_seq = (SELECT COALESCE(MAX(seq), 0) FROM jobs);
      CREATE INDEX jobs_by_completion ON jobs (completed_at) WHERE completed_at IS NOT NULL;
      CREATE TABLE inbox_v3 (
        generation INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        state TEXT NOT NULL CHECK (state IN ('pending', 'claimed', 'acked')),
        lease_expires_at INTEGER,
        acked_at INTEGER,
        envelope TEXT NOT NULL
      );
      INSERT INTO inbox_v3 (generation, id, state, lease_expires_at, acked_at, envelope)
        SELECT generation, id, state, lease_expires_at, acked_at, envelope FROM inbox;
      DROP TABLE inbox;
      ALTER TABLE inbox_v3 RENAME TO inbox;
      CREATE INDEX inbox_by_state ON inbox (state, lease_expires_at);
      CREATE INDEX inbox_by_ack ON inbox (acked_at) WHERE acked_at IS NOT NULL;
      CREATE INDEX purged_by_time ON purged (purged_at);
    `,
  },
  {
    id: 4,
    description: "the session row names its tenant; sessions from before tenants are the default's",
    sql: `ALTER TABLE session ADD COLUMN tenant TEXT NOT NULL DEFAULT 'default';`,
  },
  {
    id: 5,
    description:
      "the audit trail: a ring of AUDIT_MAX_EVENTS slots, each overwritten in place (one row written per event)",
    sql: `
      CREATE TABLE audit (
        slot INTEGER PRIMARY KEY,
        seq INTEGER NOT NULL,
        at INTEGER NOT NULL,
        type TEXT NOT NULL CHECK (type IN ('completion', 'delivery', 'run_registered', 'run_suspended',
          'run_finished', 'claim', 'ack', 'ceiling', 'operator')),
        detail TEXT NOT NULL
      );
    `,
  },
  {
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
  },
  {
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
  },
  {
    id: 8,
    description:
      "full outputs: each job's uploaded bytes and named full output, and the R2 prefixes to sweep",
    // Beside the jobs table, not in it: a column after `output` would make every summary read
    // walk that job's output. The sweep table outlives a session's delete (lifetime.ts, wipe).
    sql: `
      CREATE TABLE IF NOT EXISTS outputs (
        job_seq INTEGER PRIMARY KEY,
        uploaded_bytes INTEGER NOT NULL,
        bytes INTEGER,
        sha256 TEXT,
        parts TEXT,
        CHECK ((bytes IS NULL) = (sha256 IS NULL) AND (bytes IS NULL) = (parts IS NULL))
      );
      CREATE TABLE IF NOT EXISTS output_sweep (prefix TEXT PRIMARY KEY) WITHOUT ROWID;
    `,
  },
  {
    id: 9,
    description:
      "Cloudflare-native wake: a session may name the service binding it is woken through (null: the webhook)",
    sql: "ALTER TABLE session ADD COLUMN resume_binding TEXT;",
  },
  {
    id: 10,
    description:
      "the audit trail's records ring (accepted completions, deliveries, operator actions, ceilings, cancels) and the messages' bytes",
    // Each ring numbers its events from 0 (`ring_seq`) and keeps position p in slot
    // p % AUDIT_MAX_EVENTS. The records already in `audit` move to `audit_kept` in seq order, and
    // the noise left is numbered again, both from 0: the old ring held at most AUDIT_MAX_EVENTS
    // rows (its slots were seq % AUDIT_MAX_EVENTS), so each position is below AUDIT_MAX_EVENTS and
    // is its own slot, which this SQL can write without knowing the setting. The noise's slots
    // move through negatives so no two rows ever hold one slot mid-update.
    sql: `
      CREATE TABLE audit_kept (
        slot INTEGER PRIMARY KEY,
        ring_seq INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        at INTEGER NOT NULL,
        type TEXT NOT NULL CHECK (type IN ('completion', 'delivery', 'operator', 'ceiling', 'cancel')),
        detail TEXT NOT NULL
      );
      ALTER TABLE audit ADD COLUMN ring_seq INTEGER NOT NULL DEFAULT 0;
      INSERT INTO audit_kept (slot, ring_seq, seq, at, type, detail)
        SELECT row_number() OVER (ORDER BY seq) - 1, row_number() OVER (ORDER BY seq) - 1,
          seq, at, type, detail FROM audit
        WHERE type IN ('delivery', 'operator', 'ceiling', 'cancel')
          OR (type = 'completion' AND json_extract(detail, '$.outcome') = 'accepted');
      DELETE FROM audit WHERE type IN ('delivery', 'operator', 'ceiling', 'cancel')
        OR (type = 'completion' AND json_extract(detail, '$.outcome') = 'accepted');
      UPDATE audit SET ring_seq = numbered.position
        FROM (SELECT slot, row_number() OVER (ORDER BY seq) - 1 AS position FROM audit) AS numbered
        WHERE audit.slot = numbered.slot;
      UPDATE audit SET slot = -1 - ring_seq;
      UPDATE audit SET slot = ring_seq;
      ALTER TABLE session ADD COLUMN message_bytes INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    id: 11,
    description:
      "a wake's records share one row: the session row may hold the newest record until the next one, and a records row may carry a second event; one inbox index on acked_at instead of two",
    // Two ADD COLUMNs and an index swap: no table is rebuilt and no temp database opened.
    // `audit_held` and `second` each hold one event as JSON, `{seq, at, type, detail}` with
    // `detail` the event's other fields as JSON text; both null on every row written before. The
    // inbox's (state, lease_expires_at) index moved on every claim and ack; one index on acked_at
    // serves the same queries (unacked items are its NULL entries, in generation order) and a
    // claim does not touch it.
    sql: `
      ALTER TABLE session ADD COLUMN audit_held TEXT;
      ALTER TABLE audit_kept ADD COLUMN second TEXT;
      DROP INDEX inbox_by_state;
      DROP INDEX inbox_by_ack;
      CREATE INDEX inbox_by_acked_at ON inbox (acked_at);
    `,
  },
  {
    id: 12,
    description: "the run ids finished in the lifetime: a finished run id does not register again",
    // One small row per finished run, read by key when a run registers; WITHOUT ROWID so a finish
    // writes one billed row. It goes with the lifetime like the other rows (store/session-row.ts, writeCore;
    // a delete drops the whole storage). Runs that finished before this table have no row.
    sql: `
      CREATE TABLE finished_runs (run_id TEXT NOT NULL PRIMARY KEY, finished_at INTEGER NOT NULL)
        WITHOUT ROWID;
    `,
  },
  {
    id: 13,
    description:
      "the audit trail becomes one append-only table: records told from noise by a column, each kind numbered on its own; the two rings and the session row's held record go",
    // `kind_seq` numbers each kind's events from 1, so the newest AUDIT_MAX_EVENTS of a kind are
    // those numbered past its last minus the cap (store/audit.ts). Every event the rings and the
    // session row held keeps its seq; past the cap or the retention, the reads hide it and the
    // alarm's trim deletes it. The rings held noise (`audit`) and records (`audit_kept`, a row's
    // `second` event, the session row's `audit_held`) apart since migration 10.
    sql: `
      CREATE TABLE audit_events (
        seq INTEGER PRIMARY KEY,
        at INTEGER NOT NULL,
        type TEXT NOT NULL CHECK (type IN ('completion', 'delivery', 'run_registered', 'run_suspended',
          'run_finished', 'claim', 'ack', 'ceiling', 'operator', 'cancel')),
        record INTEGER NOT NULL CHECK (record IN (0, 1)),
        kind_seq INTEGER NOT NULL,
        detail TEXT NOT NULL
      );
      INSERT INTO audit_events (seq, at, type, record, kind_seq, detail)
        SELECT seq, at, type, record, row_number() OVER (PARTITION BY record ORDER BY seq), detail
        FROM (
          SELECT seq, at, type, 0 AS record, detail FROM audit
          UNION ALL SELECT seq, at, type, 1, detail FROM audit_kept
          UNION ALL SELECT second ->> '$.seq', second ->> '$.at', second ->> '$.type', 1,
            second ->> '$.detail' FROM audit_kept WHERE second IS NOT NULL
          UNION ALL SELECT audit_held ->> '$.seq', audit_held ->> '$.at', audit_held ->> '$.type', 1,
            audit_held ->> '$.detail' FROM session WHERE audit_held IS NOT NULL
        );
      DROP TABLE audit;
      DROP TABLE audit_kept;
      ALTER TABLE session DROP COLUMN audit_held;
    `,
  },
];

/** True once a session was ever created here (and not deleted since): its schema exists. */
export function hasSchema(sql: SqlStorage): boolean {
  return (
    sql
      .exec<{ n: number }>(
        "SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = '_migrations'",
      )
      .one().n > 0
  );
}

/** Runs, in order, each migration newer than `applied`, recording it. */
function applyAfter(sql: SqlStorage, applied: number, migrations: readonly Migration[]): void {
  for (const migration of migrations) {
    if (migration.id <= applied) continue;
    sql.exec(migration.sql);
    recordApplied(sql, migration.id);
  }
}

function recordApplied(sql: SqlStorage, id: number): void {
  sql.exec("INSERT INTO _migrations (id, applied_at) VALUES (?, ?)", id, Date.now());
}

const appliedId = (sql: SqlStorage): number =>
  sql.exec<{ id: number }>("SELECT COALESCE(MAX(id), 0) AS id FROM _migrations").one().id;

/** True when `migrations` begins with every migration the snapshot stands for (a test's list may not). */
const startsWithSnapshot = (migrations: readonly Migration[]): boolean =>
  MIGRATIONS.slice(0, SCHEMA_SNAPSHOT.lastMigrationId).every(
    (shipped, i) => migrations[i] === shipped,
  );

/**
 * The schema up to date. A new database (nothing recorded applied) runs the snapshot and records
 * the migrations it stands for; then each migration newer than what `_migrations` records runs,
 * in order. Run inside one transaction, so a database never keeps half a road.
 */
export function migrate(sql: SqlStorage, migrations: readonly Migration[] = MIGRATIONS): void {
  sql.exec(
    "CREATE TABLE IF NOT EXISTS _migrations (id INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)",
  );
  let applied = appliedId(sql);
  if (applied === 0 && startsWithSnapshot(migrations)) {
    sql.exec(SCHEMA_SNAPSHOT.sql);
    for (const migration of MIGRATIONS.slice(0, SCHEMA_SNAPSHOT.lastMigrationId)) {
      recordApplied(sql, migration.id);
    }
    applied = SCHEMA_SNAPSHOT.lastMigrationId;
  }
  applyAfter(sql, applied, migrations);
}

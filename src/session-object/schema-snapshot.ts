// The schema migrations 1–7 leave, as one string of CREATEs: what a new database gets instead of
// replaying them. Frozen like the migrations; which road a database takes is migrations.ts's.

/**
 * The last migration this snapshot stands for. Migrations after it run on a new database as on an
 * old one, so a new migration is only appended to the list; this string is never edited (a test
 * compares both roads' schemas on every run).
 */
const SNAPSHOT_ID = 7;

// Replaying the migrations kept each of their statements prepared for the object's life (~275 KB
// of SQLite heap in 68 statements) and opened SQLite's temp database for their RENAMEs (~100 KB
// more): a new database pays neither. Columns are in the order the migrations left them (`SELECT *`
// readers rely on it: the big `output` stays last).
const SQL = `
CREATE TABLE _migrations (id INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL);
INSERT INTO _migrations (id, applied_at) SELECT value, CAST(unixepoch('subsec') * 1000 AS INTEGER)
  FROM json_each('[1, 2, 3, 4, 5, 6, 7]');
CREATE TABLE session (
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
  tenant TEXT NOT NULL DEFAULT 'default',
  liveness_due_at INTEGER
);
CREATE TABLE messages (
  idx INTEGER PRIMARY KEY,
  role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system', 'tool')),
  content TEXT NOT NULL,
  metadata TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE TABLE jobs (
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
CREATE INDEX jobs_by_completion ON jobs (completed_at) WHERE completed_at IS NOT NULL;
CREATE INDEX jobs_running ON jobs (seq) WHERE completed_at IS NULL;
CREATE TABLE inbox (
  generation INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  state TEXT NOT NULL CHECK (state IN ('pending', 'claimed', 'acked')),
  lease_expires_at INTEGER,
  acked_at INTEGER,
  envelope TEXT NOT NULL
);
CREATE INDEX inbox_by_state ON inbox (state, lease_expires_at);
CREATE INDEX inbox_by_ack ON inbox (acked_at) WHERE acked_at IS NOT NULL;
CREATE TABLE purged (handle TEXT NOT NULL PRIMARY KEY, purged_at INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX purged_by_time ON purged (purged_at);
CREATE TABLE audit (
  slot INTEGER PRIMARY KEY,
  seq INTEGER NOT NULL,
  at INTEGER NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('completion', 'delivery', 'run_registered', 'run_suspended',
    'run_finished', 'claim', 'ack', 'ceiling', 'operator', 'cancel')),
  detail TEXT NOT NULL
);
`;

export const SCHEMA_SNAPSHOT = { id: SNAPSHOT_ID, sql: SQL } as const;

// What one migration of a session object's SQLite database is, and what several of them share.

export interface Migration {
  readonly id: number;
  readonly description: string;
  readonly sql: string;
}

/** The migration's own time, in ms: what a backfilled time takes, so no row looks old and is purged. */
export const NOW_MS = "CAST(unixepoch('subsec') * 1000 AS INTEGER)";
/** The default claim timeout (config.ts): a migration cannot read a deployment's own setting. */
export const DEFAULT_CLAIM_TIMEOUT_MS = 10 * 60 * 1000;

// Migration 4, shipped and frozen: never edited (a change is a new migration appended).
import type { Migration } from "./migration";

export const MIGRATION_4: Migration = {
  id: 4,
  description: "the session row names its tenant; sessions from before tenants are the default's",
  sql: `ALTER TABLE session ADD COLUMN tenant TEXT NOT NULL DEFAULT 'default';`,
};

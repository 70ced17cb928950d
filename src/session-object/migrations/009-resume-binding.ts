// Migration 9, shipped and frozen: never edited (a change is a new migration appended).
import type { Migration } from "./migration";

export const MIGRATION_9: Migration = {
  id: 9,
  description:
    "Cloudflare-native wake: a session may name the service binding it is woken through (null: the webhook)",
  sql: "ALTER TABLE session ADD COLUMN resume_binding TEXT;",
};

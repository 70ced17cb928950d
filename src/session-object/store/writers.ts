// Every write a decision can return, and the table file that stores it: one closed table, so a
// write type without a writer does not compile.

import type { Write } from "../../domain/decision";
import { AUDIT_WRITERS } from "./audit";
import type { Writers } from "./columns";
import { INBOX_WRITERS } from "./inbox";
import { JOB_WRITERS } from "./jobs";
import { MESSAGE_WRITERS } from "./messages";
import { OUTPUT_WRITERS } from "./outputs";
import { RETENTION_WRITERS } from "./retention";
import { RUN_WRITERS } from "./runs";

const WRITERS: Writers<Write["type"]> = {
  ...MESSAGE_WRITERS,
  ...JOB_WRITERS,
  ...OUTPUT_WRITERS,
  ...INBOX_WRITERS,
  ...RUN_WRITERS,
  ...RETENTION_WRITERS,
  ...AUDIT_WRITERS,
};

/** Applies one write of a decision, inside the caller's transaction. */
export function applyWrite(sql: SqlStorage, write: Write): void {
  // The table is keyed by type, so the writer found takes this write's own shape.
  (WRITERS[write.type] as (sql: SqlStorage, write: Write) => void)(sql, write);
}

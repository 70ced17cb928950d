// The answers of the /v1/ops routes as the console reads them (contract section 8). Kept loose
// where the contract is (an event carries its own fields per type); the routes own the shapes.

import type { AttentionStatus } from "../domain/attention-status";
import type { ResumeState } from "../domain/state";
import type { JobSummaryView, JobView, SessionView } from "../domain/view";

export { ATTENTION_STATUSES, type AttentionStatus } from "../domain/attention-status";

export interface IndexEntry {
  readonly tenant: string;
  readonly id: string;
  readonly status: AttentionStatus;
  readonly since: string | null;
  readonly ceiling_at: string | null;
  readonly waiting_for: readonly string[] | null;
  readonly resume: {
    readonly resume_id: string;
    readonly state: ResumeState;
    readonly attempts: number;
    readonly last_error: string | null;
    readonly next_attempt_at: string | null;
  } | null;
  readonly inbox_pending: number;
}

export interface IndexPage {
  readonly sessions: readonly IndexEntry[];
  readonly next: string | null;
  readonly counts?: Partial<Record<AttentionStatus, number>>;
}

export interface AuditEvent {
  readonly seq: number;
  readonly at: string;
  readonly type: string;
  readonly [field: string]: unknown;
}

export interface EventsPage {
  readonly events: readonly AuditEvent[];
  readonly next_after: number | null;
}

export interface JobsPage {
  readonly jobs: readonly JobSummaryView[];
  readonly next: string | null;
}

export type { JobSummaryView, JobView, SessionView };

// The rows a rule reads: the core with exactly the rows its `needs` name, each record fenced.
// Also the whole session as one value, for tests and upgrade checks only.

import type { Core, Needs, Overdue } from "../../domain/decision";
import { dict, fence } from "../../domain/records";
import type { InboxItem, Job, Session } from "../../domain/state";
import { allItems, itemFromRow, loadClaimable, loadForAck } from "./inbox";
import { allJobs, jobFromRow, loadJobs, loadOverdue } from "./jobs";
import { allMessages } from "./messages";
import { allRunsAndTombstones, loadFinishedRuns, loadTombstones } from "./runs";
import { loadCore } from "./session-row";

/**
 * The core with exactly the rows `needs` names, each record fenced to the keys asked for: a rule
 * that reads another row throws (records.ts) instead of taking a missing row for an absent one.
 */
export function loadRows(
  sql: SqlStorage,
  core: Core,
  needs: Needs,
  now: number,
): { session: Session; overdue: Overdue | null } {
  const overdue = needs.overdue === undefined ? null : loadOverdue(sql, now, needs.overdue.max);
  const handles = [...(needs.jobs?.handles ?? []), ...(overdue?.handles ?? [])];
  const tombstones = needs.tombstones ?? [];
  const jobs =
    needs.jobs === undefined && overdue === null
      ? dict<Job>()
      : loadJobs(sql, handles, needs.jobs?.output ?? false);
  const purged = tombstones.length === 0 ? dict<number>() : loadTombstones(sql, tombstones);
  const runIds = needs.finishedRuns ?? [];
  const finishedRuns = runIds.length === 0 ? dict<number>() : loadFinishedRuns(sql, runIds);
  const inbox =
    needs.claimable !== undefined
      ? loadClaimable(sql, now, needs.claimable.max, needs.claimable.maxBytes)
      : needs.items !== undefined
        ? loadForAck(sql, needs.items)
        : dict<InboxItem>();
  const inboxKeys = needs.items ?? Object.keys(inbox);
  const session = {
    ...core,
    messages: [],
    jobs: fence(jobs, handles),
    purged: fence(purged, tombstones),
    inbox: fence(inbox, inboxKeys),
    finishedRuns: fence(finishedRuns, runIds),
  };
  return { session, overdue };
}

/**
 * Every row of the session as one value — the whole-session model the domain tests use. For
 * tests and upgrade checks only: a request never loads a whole session.
 */
export function snapshot(sql: SqlStorage): Session | null {
  const core = loadCore(sql);
  if (core === null) return null;
  const jobs = dict<Job>();
  for (const row of allJobs(sql)) jobs[row.handle] = jobFromRow(row);
  const inbox = dict<InboxItem>();
  for (const row of allItems(sql)) inbox[row.id] = itemFromRow(row);
  const { finishedRuns, purged } = allRunsAndTombstones(sql);
  return { ...core, messages: allMessages(sql), jobs, inbox, purged, finishedRuns };
}

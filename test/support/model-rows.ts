// The whole-session model's rows: the in-memory twin of what the store loads for a rule's needs
// and of how it applies a decision's writes. The reference check between the two lives here too.
import type { Needs, Overdue, Write } from "../../src/domain/decision";
import { purgeExpired } from "../../src/domain/delivery";
import { copyOf, dict, fence, own } from "../../src/domain/records";
import type { InboxItem, Job, Session } from "../../src/domain/state";
import { utf8Bytes } from "../../src/domain/text";

const claimable = (item: InboxItem, now: number) =>
  item.state === "pending" ||
  (item.state === "claimed" && item.leaseExpiresAt !== null && item.leaseExpiresAt <= now);

/** What store.loadRows finds for `needs.overdue`: running jobs past their deadline, earliest first. */
export function overdueFor(session: Session, needs: Needs, now: number): Overdue | null {
  if (needs.overdue === undefined) return null;
  const running = Object.values(session.jobs).filter(
    (job) => job.result === null && job.deadlineAt !== null,
  );
  const due = running
    .filter((job) => (job.deadlineAt ?? 0) <= now)
    .sort((a, b) => (a.deadlineAt ?? 0) - (b.deadlineAt ?? 0))
    .map((job) => job.handle);
  const later = running.flatMap((job) =>
    job.deadlineAt !== null && job.deadlineAt > now ? [job.deadlineAt] : [],
  );
  return {
    handles: due.slice(0, needs.overdue.max),
    more: due.length > needs.overdue.max,
    nextDeadline: later.length === 0 ? null : Math.min(...later),
  };
}

/** What store.loadRows gives a rule: only the rows `needs` names, fenced, outputs as asked. */
export function loadFor(session: Session, needs: Needs, now: number): Session {
  const handles = [
    ...(needs.jobs?.handles ?? []),
    ...(overdueFor(session, needs, now)?.handles ?? []),
  ];
  const jobs = dict<Job>();
  for (const handle of handles) {
    const job = own(session.jobs, handle);
    if (job === undefined) continue;
    // A summary row is read without its output (store/jobs.ts, JOB_SUMMARY).
    jobs[handle] =
      needs.jobs?.output === false && job.result !== null
        ? { ...job, result: { ...job.result, output: "" } }
        : job;
  }
  const tombstones = needs.tombstones ?? [];
  const purged = dict<number>();
  for (const handle of tombstones) {
    const at = own(session.purged, handle);
    if (at !== undefined) purged[handle] = at;
  }
  const inbox = dict<InboxItem>();
  if (needs.claimable !== undefined) {
    const { max, maxBytes } = needs.claimable;
    let bytes = 0;
    const candidates = Object.values(session.inbox)
      .filter((item) => claimable(item, now))
      .sort((a, b) => a.envelope.generation - b.envelope.generation)
      .slice(0, max);
    for (const item of candidates) {
      bytes += utf8Bytes(JSON.stringify(item.envelope));
      if (Object.keys(inbox).length > 0 && bytes > maxBytes) break;
      inbox[item.envelope.id] = item;
    }
  }
  for (const id of needs.items ?? []) {
    const item = own(session.inbox, id);
    if (item !== undefined) inbox[id] = item;
  }
  const runIds = needs.finishedRuns ?? [];
  const finishedRuns = dict<number>();
  for (const runId of runIds) {
    const at = own(session.finishedRuns, runId);
    if (at !== undefined) finishedRuns[runId] = at;
  }
  return {
    ...session,
    messages: [],
    jobs: fence(jobs, handles),
    purged: fence(purged, tombstones),
    inbox: fence(inbox, needs.items ?? Object.keys(inbox)),
    finishedRuns: fence(finishedRuns, runIds),
  };
}

/** Applies writes to a session's rows as store.applyWrite does to SQLite. */
export function applyWrites(session: Session, writes: readonly Write[]): Session {
  let { messages } = session;
  let jobs = copyOf(session.jobs);
  let inbox = copyOf(session.inbox);
  let purged = copyOf(session.purged);
  const finishedRuns = copyOf(session.finishedRuns);
  for (const write of writes) {
    switch (write.type) {
      case "insert_message":
        messages = [...messages, write.message];
        break;
      case "insert_job":
        jobs[write.job.handle] = write.job;
        break;
      case "replace_job_token": {
        const job = own(jobs, write.handle);
        if (job !== undefined) jobs[write.handle] = { ...job, callbackToken: write.callbackToken };
        break;
      }
      case "complete_job":
        if (own(jobs, write.job.handle)?.result === null) jobs[write.job.handle] = write.job;
        break;
      case "update_liveness":
        if (own(jobs, write.job.handle)?.result === null) jobs[write.job.handle] = write.job;
        break;
      case "add_uploaded_bytes": {
        const job = own(jobs, write.handle);
        if (job?.result === null) {
          jobs[write.handle] = { ...job, uploadedBytes: (job.uploadedBytes ?? 0) + write.bytes };
        }
        break;
      }
      case "insert_envelope":
        inbox[write.item.envelope.id] = write.item;
        break;
      case "insert_finished_run":
        finishedRuns[write.runId] = write.finishedAt;
        break;
      case "mark_claimed":
        for (const id of write.ids) {
          const item = own(inbox, id);
          if (item !== undefined) {
            inbox[id] = {
              ...item,
              state: "claimed",
              leaseExpiresAt: write.leaseExpiresAt,
              ackedAt: null,
            };
          }
        }
        break;
      case "mark_acked":
        for (const id of write.ids) {
          const item = own(inbox, id);
          if (item !== undefined) {
            inbox[id] = { ...item, state: "acked", leaseExpiresAt: null, ackedAt: write.ackedAt };
          }
        }
        break;
      case "purge_before": {
        const after = purgeExpired({ ...session, jobs, inbox, purged }, write.horizon, write.now);
        jobs = copyOf(after.jobs);
        inbox = copyOf(after.inbox);
        purged = copyOf(after.purged);
        break;
      }
    }
  }
  return { ...session, messages, jobs, inbox, purged, finishedRuns };
}

/**
 * The reference diff, kept as a check: the rows a decision returned must be exactly its writes
 * applied to the rows it was given. A decision that changes a row without saying so, or says so
 * wrongly, fails here.
 */
export function checkWrites(given: Session, decided: Session, writes: readonly Write[]): void {
  const applied = applyWrites(given, writes);
  const rows = (session: Session) =>
    JSON.stringify({
      messages: session.messages,
      jobs: sorted(session.jobs),
      inbox: sorted(session.inbox),
      purged: sorted(session.purged),
      finishedRuns: sorted(session.finishedRuns),
    });
  if (rows(applied) !== rows(decided)) {
    throw new Error(
      `a decision's writes do not make its rows\nwrites: ${JSON.stringify(writes)}\nrows: ${rows(decided)}\napplied: ${rows(applied)}`,
    );
  }
}

const sorted = <T>(record: Readonly<Record<string, T>>) =>
  Object.keys(record)
    .sort()
    .map((key) => [key, record[key]]);

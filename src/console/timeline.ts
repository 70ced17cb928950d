// Reads one session's timeline from the /v1/ops routes: the view, the first page of jobs and the
// newest events of the trail. Rendering it, and wording the failures, is left to the pages.
import type { ApiAnswer } from "./operator-api";
import type { Timeline } from "./session-page";
import type { AuditEvent, EventsPage, JobsPage, SessionView } from "./shapes";

type OperatorGet = <T>(method: "GET", path: string) => Promise<ApiAnswer<T>>;

/** The trail is bounded (AUDIT_MAX_EVENTS), so a few pages reach its end. */
const EVENTS_PAGE = 500;
const MAX_EVENT_PAGES = 20;
const EVENTS_SHOWN = 100;

export async function readTimeline(
  get: OperatorGet,
  tenant: string,
  sid: string,
): Promise<Timeline> {
  const base = `/v1/ops/sessions/${encodeURIComponent(tenant)}/${encodeURIComponent(sid)}`;
  const [view, jobs, trail] = await Promise.all([
    get<SessionView>("GET", base),
    get<JobsPage>("GET", `${base}/exec-jobs?limit=100`),
    newestEvents(get, base),
  ]);
  const errors: string[] = [];
  if (!view.ok) errors.push(`The session could not be read. ${view.message}`);
  // A missing session has no jobs or trail to speak of: one message says it.
  if (view.ok && !jobs.ok) errors.push(`The jobs could not be read. ${jobs.message}`);
  if (view.ok && !trail.ok) errors.push(`The audit trail could not be read. ${trail.message}`);
  return {
    tenant,
    id: sid,
    view: view.ok ? view.value : null,
    jobs: jobs.ok ? jobs.value.jobs : [],
    jobsNext: jobs.ok ? jobs.value.next : null,
    events: trail.ok ? trail.value.events : [],
    eventsTotal: trail.ok ? trail.value.total : 0,
    errors,
  };
}

/** Pages through the trail by `seq` and keeps the newest, newest first. */
async function newestEvents(
  get: OperatorGet,
  base: string,
): Promise<ApiAnswer<{ events: AuditEvent[]; total: number }>> {
  let kept: AuditEvent[] = [];
  let total = 0;
  let after = 0;
  for (let page = 0; page < MAX_EVENT_PAGES; page += 1) {
    const answer = await get<EventsPage>(
      "GET",
      `${base}/events?after=${after}&limit=${EVENTS_PAGE}`,
    );
    if (!answer.ok) return answer;
    total += answer.value.events.length;
    kept = [...kept, ...answer.value.events].slice(-EVENTS_SHOWN);
    if (answer.value.next_after === null) break;
    after = answer.value.next_after;
  }
  return { ok: true, status: 200, value: { events: kept.reverse(), total } };
}

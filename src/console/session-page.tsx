// One session's timeline: its state (the view), its jobs (summaries, outputs on demand) and its
// audit trail, newest first, with the actions that apply. Fetching the data is left to the route.
import type { FC } from "hono/jsx";
import { Badge, Dash, Notice, When } from "./layout";
import { sessionHref } from "./list-page";
import type { AuditEvent, JobSummaryView, SessionView } from "./shapes";
import { Visible } from "./visible-text";

export interface Timeline {
  readonly tenant: string;
  readonly id: string;
  readonly view: SessionView | null;
  readonly jobs: readonly JobSummaryView[];
  readonly jobsNext: string | null;
  /** Newest first. */
  readonly events: readonly AuditEvent[];
  readonly eventsTotal: number;
  /** Each failed read, worded for a person. */
  readonly errors: readonly string[];
}

export const SessionPage: FC<{ timeline: Timeline; done: string | null; now: number }> = ({
  timeline,
  done,
  now,
}) => {
  const { tenant, id, view } = timeline;
  const base = sessionHref(tenant, id);
  return (
    <>
      <p class="muted">
        <a href="/console">← Sessions that need attention</a>
      </p>
      <div id="live">
        <h1>
          <span class="mono">{id}</span> {view ? <Badge status={view.status} /> : null}
        </h1>
        <p class="sub">
          tenant <b>{tenant}</b>
          {view ? (
            <>
              {" "}
              · lifetime {view.lifetime} · created <When iso={view.created_at} now={now} />
            </>
          ) : null}
        </p>
        <Notice error={timeline.errors.join(" · ") || null} done={done} />
        {view ? (
          <>
            <Actions base={base} view={view} />
            <State view={view} now={now} />
            <h2>Jobs</h2>
            <Jobs base={base} jobs={timeline.jobs} now={now} />
            {timeline.jobsNext ? (
              <p class="muted">
                Showing the first {timeline.jobs.length} jobs in reservation order.
              </p>
            ) : null}
            <h2>Audit trail</h2>
            <Trail events={timeline.events} total={timeline.eventsTotal} now={now} />
          </>
        ) : null}
      </div>
    </>
  );
};

const Actions: FC<{ base: string; view: SessionView }> = ({ base, view }) => (
  <nav class="actions" aria-label="Actions">
    {view.resume?.state === "failed" ? (
      <a href={`${base}/confirm/redeliver`}>Redeliver resume…</a>
    ) : null}
    {view.waiting_for_bash ? <a href={`${base}/confirm/expire-wait`}>Expire wait…</a> : null}
    <a href={`${base}/confirm/delete`} class="danger">
      Delete session…
    </a>
  </nav>
);

const State: FC<{ view: SessionView; now: number }> = ({ view, now }) => (
  <div class="grid">
    <section class="card" aria-label="Wait">
      <dl>
        <dt>Run</dt>
        <dd class="mono">{view.run ? view.run.run_id : "none"}</dd>
        <dt>Waiting for</dt>
        <dd class="mono">
          {view.waiting_for_bash
            ? `${view.waiting_for_bash.handles.join(", ")} (wake ${view.waiting_for_bash.wake})`
            : "nothing"}
        </dd>
        <dt>Since</dt>
        <dd>
          <When iso={view.waiting_for_bash?.since} now={now} />
        </dd>
        <dt>Deadline</dt>
        <dd>
          <When iso={view.waiting_for_bash?.ceiling_at} now={now} kind="deadline" />
        </dd>
      </dl>
    </section>
    <section class="card" aria-label="Resume">
      {view.resume ? (
        <dl>
          <dt>Resume</dt>
          <dd>
            <Badge status={view.resume.state} /> <span class="mono">{view.resume.resume_id}</span>
          </dd>
          <dt>Reason</dt>
          <dd class="mono">{view.resume.reason}</dd>
          <dt>Attempts</dt>
          <dd>{view.resume.attempts}</dd>
          <dt>Last error</dt>
          <dd class={view.resume.last_error ? "late" : "muted"}>
            {view.resume.last_error ? <Visible text={view.resume.last_error} /> : "none"}
          </dd>
          <dt>Next attempt</dt>
          <dd>
            <When iso={view.resume.next_attempt_at} now={now} />
          </dd>
          <dt>Delivered</dt>
          <dd>
            <When iso={view.resume.delivered_at} now={now} />
          </dd>
        </dl>
      ) : (
        <p class="muted">{noResume(view)}</p>
      )}
    </section>
    <section class="card" aria-label="Inbox">
      <dl>
        <dt>Inbox</dt>
        <dd>
          {view.inbox.pending} pending · {view.inbox.claimed} claimed
        </dd>
        <dt>Jobs</dt>
        <dd>
          {view.jobs.running} running · {view.jobs.done} done
        </dd>
        <dt>Messages</dt>
        <dd>{view.message_count}</dd>
        {view.resume_binding === null ? (
          <>
            <dt>Resume URL</dt>
            <dd class="mono">{view.resume_url ?? "none (tenant default)"}</dd>
          </>
        ) : (
          <>
            <dt>Resume binding</dt>
            <dd class="mono">{view.resume_binding} (wake() through a service binding)</dd>
          </>
        )}
      </dl>
    </section>
  </div>
);

/** Why there is no resume, in the terms of what the session holds: pending items wait for something. */
export function noResume(view: SessionView): string {
  const pending = view.inbox.pending;
  if (pending === 0) return "No resume: the agent host has nothing to take.";
  const items =
    pending === 1 ? "1 pending inbox item waits" : `${pending} pending inbox items wait`;
  const wait = view.waiting_for_bash;
  if (wait !== null && wait !== undefined) {
    const condition =
      wait.wake === "all" ? "every awaited job has finished" : "an awaited job finishes";
    return `No resume yet: ${items} until ${condition} (wake ${wait.wake}: ${wait.handles.join(", ")}) or the deadline passes; the resume then carries it.`;
  }
  return `No resume yet: ${items} for the agent's next run to claim.`;
}

/** A running job's last heartbeat progress: how much it wrote, when, and its last lines. */
const Progress: FC<{ progress: NonNullable<JobSummaryView["progress"]>; now: number }> = ({
  progress,
  now,
}) => (
  <details>
    <summary>
      {progress.output_bytes_total === null ? "progress" : `${progress.output_bytes_total} bytes`}{" "}
      <When iso={progress.at} now={now} />
    </summary>
    <pre class="mono">
      <Visible text={progress.output_tail} />
    </pre>
  </details>
);

const Jobs: FC<{ base: string; jobs: readonly JobSummaryView[]; now: number }> = ({
  base,
  jobs,
  now,
}) =>
  jobs.length === 0 ? (
    <div class="empty">
      <strong>No jobs in this lifetime.</strong>
      Jobs appear when the agent starts a background command; finished ones stay for the retention
      window.
    </div>
  ) : (
    <table>
      <thead>
        <tr>
          <th>Handle</th>
          <th>Command</th>
          <th>Status</th>
          <th>Exit</th>
          <th>Reserved</th>
          <th>Completed</th>
          <th>Output</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {jobs.map((job) => {
          const jobBase = `${base}/jobs/${encodeURIComponent(job.handle)}`;
          return (
            <tr data-job={job.handle}>
              <td class="mono">{job.handle}</td>
              <td class="mono">
                <Visible text={job.command} />
              </td>
              <td>
                <Badge status={job.status} />
                {job.ended_by ? <div class="muted">by {job.ended_by}</div> : null}
              </td>
              <td>{job.exit_code ?? <Dash />}</td>
              <td>
                <When iso={job.reserved_at} now={now} />
              </td>
              <td>
                <When iso={job.completed_at} now={now} />
              </td>
              <td>
                {job.status !== "running" ? (
                  <>
                    <a href={jobBase}>{job.output_bytes_total} bytes</a>
                    {job.full_output === null ? null : (
                      <div>
                        <a href={`${jobBase}/output`}>full: {job.full_output.bytes} bytes</a>
                      </div>
                    )}
                  </>
                ) : job.progress === null ? (
                  <Dash />
                ) : (
                  <Progress progress={job.progress} now={now} />
                )}
              </td>
              <td>
                {job.status === "running" ? (
                  <>
                    {job.cancel_requested ? (
                      <div class="muted">cancel requested</div>
                    ) : (
                      <a href={`${jobBase}/confirm/cancel`} class="danger">
                        Cancel…
                      </a>
                    )}{" "}
                    <a href={`${jobBase}/confirm/mark-lost`} class="danger">
                      Mark lost…
                    </a>
                  </>
                ) : null}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );

const SHOWN_AS_COLUMNS = new Set(["seq", "at", "type"]);

const Trail: FC<{ events: readonly AuditEvent[]; total: number; now: number }> = ({
  events,
  total,
  now,
}) =>
  events.length === 0 ? (
    <div class="empty">
      <strong>No events recorded.</strong>
      Completions, resume deliveries, runs, claims and operator actions are recorded here as they
      happen.
    </div>
  ) : (
    <>
      <table>
        <thead>
          <tr>
            <th>#</th>
            <th>When</th>
            <th>Event</th>
            <th>Details</th>
          </tr>
        </thead>
        <tbody>
          {events.map((event) => (
            <tr data-event={event.type}>
              <td class="muted">{event.seq}</td>
              <td>
                <When iso={event.at} now={now} />
              </td>
              <td>
                <b>{event.type.replace("_", " ")}</b>
              </td>
              <td class={failedAttempt(event) ? "mono late" : "mono"}>
                <Visible text={eventDetails(event)} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {total > events.length ? (
        <p class="muted">
          The newest {events.length} of {total} events, newest first.
        </p>
      ) : null}
    </>
  );

/** A delivery without a 2xx, or a completion the object refused: red in the trail. */
const failedAttempt = (event: AuditEvent): boolean =>
  (event.type === "delivery" &&
    // A binding has no HTTP status: its error says it failed.
    (event.binding === undefined
      ? !(typeof event.status === "number" && event.status < 300)
      : event.error !== null)) ||
  (event.type === "completion" && event.outcome !== "accepted" && event.outcome !== "duplicate");

/** "handle=h outcome=accepted disposition=resume_scheduled": the event's own fields, in order. */
function eventDetails(event: AuditEvent): string {
  return Object.entries(event)
    .filter(([key, value]) => !SHOWN_AS_COLUMNS.has(key) && value !== null && value !== undefined)
    .map(([key, value]) => `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`)
    .join("  ");
}

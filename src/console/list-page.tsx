// The attention list: sessions the index says need a person, with counts per status, filters,
// age and deadline columns. Fetching the index page and the paging cursor is left to the route.
import type { FC } from "hono/jsx";
import { Badge, Dash, Notice, When } from "./layout";
import { ATTENTION_STATUSES, type IndexEntry, type IndexPage } from "./shapes";
import { Visible } from "./visible-text";

interface ListFilters {
  readonly status: string | null;
  readonly tenant: string | null;
  readonly cursor: string | null;
}

const WHAT_IT_MEANS: Record<string, string> = {
  suspended: "waiting for background jobs",
  resuming: "a resume is on its way to the agent host",
  failed: "the resume could not be delivered: redeliver it",
  no_target: "nowhere to deliver a resume: no resume URL",
  overdue: "past its ceiling, or a delivered resume no run took",
};

export function listHref(filters: Partial<ListFilters>): string {
  const query = new URLSearchParams();
  if (filters.status) query.set("status", filters.status);
  if (filters.tenant) query.set("tenant", filters.tenant);
  if (filters.cursor) query.set("cursor", filters.cursor);
  const text = query.toString();
  return text === "" ? "/console" : `/console?${text}`;
}

export const sessionHref = (tenant: string, id: string) =>
  `/console/sessions/${encodeURIComponent(tenant)}/${encodeURIComponent(id)}`;

export const ListPage: FC<{
  filters: ListFilters;
  page: IndexPage | null;
  error: string | null;
  done: string | null;
  now: number;
}> = ({ filters, page, error, done, now }) => (
  <>
    <h1>Sessions that need attention</h1>
    <p class="sub">
      Suspended agents, resumes on their way or failed, and sessions past their deadline. Open one
      to see its timeline and mend it.
    </p>
    <form method="get" action="/console" class="actions">
      <label>
        Status{" "}
        <select name="status">
          <option value="">all</option>
          {ATTENTION_STATUSES.map((status) => (
            <option value={status} selected={filters.status === status}>
              {status.replace("_", " ")}
            </option>
          ))}
        </select>
      </label>
      <label>
        Tenant <input name="tenant" value={filters.tenant ?? ""} placeholder="any tenant" />
      </label>
      <button type="submit">Filter</button>
      {filters.status || filters.tenant ? <a href="/console">Clear filters</a> : null}
    </form>
    <div id="live">
      <Notice error={error} done={done} />
      {page === null ? null : (
        <>
          <Counts filters={filters} counts={page.counts ?? {}} />
          {page.sessions.length === 0 ? (
            <EmptyList filters={filters} />
          ) : (
            <SessionTable sessions={page.sessions} now={now} />
          )}
          {page.next === null ? null : (
            <p>
              <a href={listHref({ ...filters, cursor: page.next })}>Next page →</a>
            </p>
          )}
        </>
      )}
    </div>
  </>
);

const Counts: FC<{ filters: ListFilters; counts: Partial<Record<string, number>> }> = ({
  filters,
  counts,
}) => (
  <nav class="tabs" aria-label="Counts by status">
    {ATTENTION_STATUSES.map((status) => (
      <a
        class={`tab${filters.status === status ? " on" : ""}`}
        href={listHref({ tenant: filters.tenant, status })}
        data-count={status}
        title={WHAT_IT_MEANS[status]}
      >
        <Badge status={status} />
        <b>{counts[status] ?? 0}</b>
      </a>
    ))}
  </nav>
);

const EmptyList: FC<{ filters: ListFilters }> = ({ filters }) =>
  filters.status || filters.tenant ? (
    <div class="empty">
      <strong>
        No {filters.status ? filters.status.replace("_", " ") : "listed"} sessions
        {filters.tenant ? ` in tenant ${filters.tenant}` : ""}.
      </strong>
      Try another status, or <a href="/console">clear the filters</a> to see every session that
      needs attention.
    </div>
  ) : (
    <div class="empty">
      <strong>Nothing needs attention.</strong>
      Sessions show up here when an agent suspends on background jobs, while its resume is on the
      way, and when a resume fails. This page refreshes by itself.
    </div>
  );

const SessionTable: FC<{ sessions: readonly IndexEntry[]; now: number }> = ({ sessions, now }) => (
  <table>
    <thead>
      <tr>
        <th>Session</th>
        <th>Status</th>
        <th>Since</th>
        <th>Deadline</th>
        <th>Waiting for</th>
        <th>Resume</th>
        <th>Inbox</th>
      </tr>
    </thead>
    <tbody>
      {sessions.map((entry) => (
        <tr data-session={`${entry.tenant}/${entry.id}`}>
          <td>
            <a href={sessionHref(entry.tenant, entry.id)} class="mono">
              {entry.id}
            </a>
            <div class="muted">{entry.tenant}</div>
          </td>
          <td>
            <Badge status={entry.status} />
          </td>
          <td>
            <When iso={entry.since} now={now} />
          </td>
          <td>
            <When iso={entry.ceiling_at} now={now} kind="deadline" />
          </td>
          <td class="mono">
            {entry.waiting_for?.length ? entry.waiting_for.join(", ") : <Dash />}
          </td>
          <td>
            {entry.resume === null ? (
              <span class="muted">none</span>
            ) : (
              <>
                <Badge status={entry.resume.state} />{" "}
                <span class="muted">
                  {entry.resume.attempts} attempt{entry.resume.attempts === 1 ? "" : "s"}
                </span>
                {entry.resume.last_error ? (
                  <div class="late">
                    <Visible text={entry.resume.last_error} />
                  </div>
                ) : null}
                {entry.resume.next_attempt_at ? (
                  <div class="muted">
                    next <When iso={entry.resume.next_attempt_at} now={now} />
                  </div>
                ) : null}
              </>
            )}
          </td>
          <td>{entry.inbox_pending}</td>
        </tr>
      ))}
    </tbody>
  </table>
);

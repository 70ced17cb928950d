// The console's small pages: sign-in, an action's confirmation, and one job's full output.
// Whether the token is good and whether the action applies is decided by the routes and the API.
import type { FC } from "hono/jsx";
import type { ConsoleAction } from "./actions";
import { Badge, FormToken, Notice, When } from "./layout";
import type { JobView } from "./shapes";
import { Visible } from "./visible-text";

export const SignInPage: FC<{ error: string | null }> = ({ error }) => (
  <div class="card" style="max-width:440px;margin:40px auto">
    <h1>Sign in</h1>
    <p class="sub">
      Paste an operator token (one of <code>OPERATOR_TOKENS</code>). It stays in this browser
      session only, and is sent to nothing but this console.
    </p>
    <Notice error={error} />
    <form method="post" action="/console/sign-in">
      <p>
        <label>
          Operator token
          <br />
          <input
            type="password"
            name="token"
            autocomplete="off"
            required
            autofocus
            style="width:100%"
          />
        </label>
      </p>
      <button type="submit" class="primary">
        Sign in
      </button>
    </form>
  </div>
);

export const ConfirmPage: FC<{
  action: ConsoleAction;
  subject: string;
  postTo: string;
  backTo: string;
  formToken: string;
  error: string | null;
}> = ({ action, subject, postTo, backTo, formToken, error }) => (
  <div class="card" style="max-width:560px;margin:24px auto">
    <h1>{action.label}?</h1>
    <p class="sub mono">{subject}</p>
    <p>{action.explain}</p>
    <Notice error={error} />
    <form method="post" action={postTo} class="actions">
      <FormToken value={formToken} />
      <button type="submit" class={action.dangerous ? "danger primary" : "primary"}>
        {action.label}
      </button>
      <a href={backTo}>Cancel</a>
    </form>
  </div>
);

export const JobPage: FC<{
  job: JobView | null;
  handle: string;
  backTo: string;
  error: string | null;
  now: number;
}> = ({ job, handle, backTo, error, now }) => (
  <>
    <p class="muted">
      <a href={backTo}>← Back to the session</a>
    </p>
    <h1>
      Job <span class="mono">{handle}</span> {job ? <Badge status={job.status} /> : null}
    </h1>
    <Notice error={error} />
    {job ? (
      <>
        <dl class="card">
          <dt>Command</dt>
          <dd class="mono">
            <Visible text={job.command} />
          </dd>
          <dt>Exit code</dt>
          <dd>{job.exit_code ?? "—"}</dd>
          <dt>Ended by</dt>
          <dd>{job.ended_by ?? "—"}</dd>
          <dt>Reserved</dt>
          <dd>
            <When iso={job.reserved_at} now={now} />
          </dd>
          <dt>Completed</dt>
          <dd>
            <When iso={job.completed_at} now={now} />
          </dd>
          <dt>Output</dt>
          <dd>
            {job.output_bytes_total} bytes
            {job.output_truncated
              ? job.full_output === null
                ? " (truncated by the runner: only the tail was kept)"
                : " (head and tail below)"
              : ""}
          </dd>
          <dt>Full output</dt>
          <dd>
            {job.full_output === null ? (
              <span class="muted">none uploaded</span>
            ) : (
              <>
                <a href={`${encodeURIComponent(job.handle)}/output`}>
                  {job.full_output.bytes} bytes
                </a>{" "}
                <span class="muted mono">sha256 {job.full_output.sha256}</span>
              </>
            )}
          </dd>
        </dl>
        <h2>Output</h2>
        {job.output === "" ? (
          <p class="muted">The job printed nothing.</p>
        ) : (
          <pre>
            <Visible text={job.output} />
          </pre>
        )}
      </>
    ) : null}
  </>
);

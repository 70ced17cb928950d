// The operator console at /console: sign-in, the attention list, one session's timeline, job
// outputs and the confirmed actions. Every read and action goes through the /v1/ops routes.
import { Hono } from "hono";
import type { Child } from "hono/jsx";
import { problem } from "../../shared/problem";
import { type SignInBudget, signInAllowed, signInBudgets } from "../domain/console-session";
import type { AppEnv } from "../http/context";
import { ACTIONS, type ActionName, isActionName, JOB_ACTIONS } from "./actions";
import {
  clearAttempts,
  countAttempt,
  createSession,
  endSession,
  giveBackAttempt,
  newSessionId,
  sha256Hex,
} from "./console-sessions";
import { Page } from "./layout";
import { ListPage, listHref, sessionHref } from "./list-page";
import { operatorCall, operatorStream, segment } from "./operator-api";
import {
  type ConsoleContext,
  type ConsoleEnv,
  carriesFormToken,
  clearSessionCookie,
  formToken,
  isOperatorToken,
  isSameOrigin,
  knownDevice,
  setDeviceCookie,
  setSessionCookie,
  signedIn,
} from "./operator-cookie";
import { consoleSecurityHeaders } from "./security-headers";
import { SessionPage } from "./session-page";
import type { IndexPage, JobView } from "./shapes";
import { ConfirmPage, JobPage, SignInPage } from "./small-pages";
import { readTimeline } from "./timeline";

const SESSION = "/sessions/:tenant/:sid";

/** Mounts the console on `app`; its reads and actions call `app`'s own /v1/ops routes. */
export function consoleRoutes(app: Hono<AppEnv>): void {
  app.route("/console", consolePages(app));
}

function consolePages(api: Hono<AppEnv>): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  app.use("*", guard);

  app.post("/sign-in", async (c) => {
    const db = c.env.INDEX;
    if (db === undefined) return problem("internal", "the INDEX binding (D1) is not configured");
    const now = Date.now();
    const budgets = signInBudgets(await knownDevice(c), c.req.header("cf-connecting-ip") ?? null);
    // Counted before the token is looked at: a throttled client learns nothing about its guess.
    // A count that refuses stops the counting: a held client uses up no shared count.
    const counted: { budget: SignInBudget; windowStart: number }[] = [];
    for (const budget of budgets) {
      const window = await countAttempt(db, budget.key, now);
      const throttle = signInAllowed(window, now, budget.limit);
      if (!throttle.allowed) {
        const seconds = Math.max(1, Math.ceil(throttle.retryAfterMs / 1000));
        const body = <SignInPage error={`Too many sign-in attempts. Try again in ${seconds} s.`} />;
        const page = render(c, 429, "Sign in", body);
        page.headers.set("retry-after", String(seconds));
        return page;
      }
      counted.push({ budget, windowStart: window.windowStart });
    }
    const form = await c.req.parseBody();
    const token = typeof form.token === "string" ? form.token.trim() : "";
    if (!isOperatorToken(c, token)) {
      return render(c, 401, "Sign in", <SignInPage error="That is not an operator token." />);
    }
    for (const { budget, windowStart } of counted) {
      if (budget.shared) await giveBackAttempt(db, budget.key, windowStart);
      else await clearAttempts(db, budget.key);
    }
    // A new id at every sign-in: a session id (or form token) seen before cannot be carried over.
    if (c.var.consoleSession !== "") await endSession(db, c.var.consoleSession);
    const sessionId = newSessionId();
    await createSession(db, sessionId, await sha256Hex(token), now);
    setSessionCookie(c, sessionId);
    await setDeviceCookie(c, token);
    return c.redirect("/console", 303);
  });

  app.post("/sign-out", async (c) => {
    const db = c.env.INDEX;
    if (c.var.consoleSession !== "" && db !== undefined) await endSession(db, c.var.consoleSession);
    clearSessionCookie(c);
    return c.redirect("/console", 303);
  });

  app.get("/", async (c) => {
    const token = c.var.operator;
    const filters = {
      status: c.req.query("status") || null,
      tenant: c.req.query("tenant") || null,
      cursor: c.req.query("cursor") || null,
    };
    const query = new URLSearchParams({ limit: "100" });
    for (const [key, value] of Object.entries(filters)) if (value) query.set(key, value);
    const answer = await operatorCall<IndexPage>(api, c, token, "GET", `/v1/ops/sessions?${query}`);
    const body = (
      <ListPage
        filters={filters}
        page={answer.ok ? answer.value : null}
        error={answer.ok ? null : `The session index could not be read. ${answer.message}`}
        done={doneNotice(c)}
        now={Date.now()}
      />
    );
    return render(c, 200, "Sessions", body, true);
  });

  app.get(SESSION, async (c) => {
    const { tenant, sid } = sessionParams(c);
    const timeline = await readTimeline(
      (method, path) => operatorCall(api, c, c.var.operator, method, path),
      tenant,
      sid,
    );
    const body = <SessionPage timeline={timeline} done={doneNotice(c)} now={Date.now()} />;
    // A session that is not there will not appear by refreshing: the page stays still.
    const found = timeline.view !== null;
    return render(c, found ? 200 : 404, sid, body, found);
  });

  app.get(`${SESSION}/jobs/:handle`, async (c) => {
    const { tenant, sid, handle } = sessionParams(c);
    const path = `${apiBase(tenant, sid)}/exec-jobs/${segment(handle)}`;
    const answer = await operatorCall<JobView>(api, c, c.var.operator, "GET", path);
    const body = (
      <JobPage
        job={answer.ok ? answer.value : null}
        handle={handle}
        backTo={sessionHref(tenant, sid)}
        error={answer.ok ? null : `The job could not be read. ${answer.message}`}
        now={Date.now()}
      />
    );
    return render(c, answer.ok ? 200 : answer.status, handle, body);
  });

  // The full output, as text in the browser (ranges pass through).
  app.get(`${SESSION}/jobs/:handle/output`, async (c) => {
    const { tenant, sid, handle } = sessionParams(c);
    const path = `${apiBase(tenant, sid)}/exec-jobs/${segment(handle)}/output`;
    return operatorStream(api, c, c.var.operator, path);
  });

  for (const prefix of [SESSION, `${SESSION}/jobs/:handle`]) {
    app.get(`${prefix}/confirm/:action`, (c) => {
      const target = actionTarget(c);
      if (target === null) return c.notFound();
      return render(
        c,
        200,
        target.action.label,
        <ConfirmPage {...target} formToken={c.var.formToken} error={null} />,
      );
    });

    app.post(`${prefix}/actions/:action`, async (c) => {
      const target = actionTarget(c);
      if (target === null) return c.notFound();
      const answer = await operatorCall(api, c, c.var.operator, target.action.method, target.api);
      if (!answer.ok) {
        const body = (
          <ConfirmPage
            {...target}
            formToken={c.var.formToken}
            error={`It did not work. ${answer.message}`}
          />
        );
        return render(c, answer.status, target.action.label, body);
      }
      const back = target.name === "delete" ? listHref({}) : target.backTo;
      return c.redirect(`${back}${back.includes("?") ? "&" : "?"}done=${target.name}`, 303);
    });
  }
  return app;
}

/**
 * Security headers on every console answer; a signed-in operator, and a POST from the same origin
 * that echoes the operator's form token (signing in has no token yet: the origin check covers it).
 */
async function guard(c: ConsoleContext, next: () => Promise<void>): Promise<Response | undefined> {
  const nonce = crypto.randomUUID();
  c.set("nonce", nonce);
  if (c.req.method === "POST" && !isSameOrigin(c)) {
    return c.text("Refused: console forms are accepted only from the console's own pages.", 403);
  }
  const session = await signedIn(c, Date.now());
  const token = session?.token ?? null;
  c.set("operator", token ?? "");
  c.set("consoleSession", session?.sessionId ?? "");
  c.set("formToken", session === null ? "" : await formToken(session.sessionId));
  if (token === null && c.req.path !== "/console/sign-in" && c.req.path !== "/console/sign-out") {
    // A signed-out visitor gets the form, whatever they asked for; nothing acts without a token.
    return render(c, 401, "Sign in", <SignInPage error={null} />);
  }
  if (
    c.req.method === "POST" &&
    token !== null &&
    c.req.path !== "/console/sign-in" &&
    !(await carriesFormToken(c, c.var.formToken))
  ) {
    return c.text("Refused: this form did not come from a console page of this sign-in.", 403);
  }
  await next();
  return undefined;
}

function render(c: ConsoleContext, status: number, title: string, body: Child, live = false) {
  const page = (
    <Page title={title} nonce={c.var.nonce} formToken={c.var.formToken} live={live}>
      {body}
    </Page>
  );
  const headers = {
    "content-type": "text/html; charset=utf-8",
    ...consoleSecurityHeaders(c.var.nonce),
  };
  return new Response(`<!doctype html>${page}`, { status, headers });
}

function sessionParams(c: ConsoleContext) {
  return {
    tenant: c.req.param("tenant") ?? "",
    sid: c.req.param("sid") ?? "",
    handle: c.req.param("handle") ?? "",
  };
}

const apiBase = (tenant: string, sid: string) =>
  `/v1/ops/sessions/${segment(tenant)}/${segment(sid)}`;

/** The action the path names, and only where it applies: job actions on a job, the rest on a session. */
function actionTarget(c: ConsoleContext) {
  const name = c.req.param("action") ?? "";
  const { tenant, sid, handle } = sessionParams(c);
  const onJob = c.req.param("handle") !== undefined;
  if (!isActionName(name) || JOB_ACTIONS.has(name) !== onJob) return null;
  const action = ACTIONS[name];
  const page = onJob
    ? `${sessionHref(tenant, sid)}/jobs/${segment(handle)}`
    : sessionHref(tenant, sid);
  return {
    name: name as ActionName,
    action,
    subject: onJob ? `${tenant} / ${sid} / job ${handle}` : `${tenant} / ${sid}`,
    postTo: `${page}/actions/${name}`,
    backTo: sessionHref(tenant, sid),
    api: `${apiBase(tenant, sid)}${action.apiSuffix(onJob ? handle : null)}`,
  };
}

/** Only the fixed wording of a known action: the query string never reaches the page as text. */
function doneNotice(c: ConsoleContext): string | null {
  const done = c.req.query("done") ?? "";
  return isActionName(done) ? ACTIONS[done].done : null;
}

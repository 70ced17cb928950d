// The page shell of the console: head, header, styles, and the one small script (relative times,
// auto-refresh of the live region). Each page supplies its own body; routes pick the status code.
import type { Child, FC } from "hono/jsx";
import { FAVICON_PATH } from "../http/favicon";
import {
  type BadgeStatus,
  deadline,
  RELATIVE_TIME_SOURCE,
  relativeIso,
  statusTone,
} from "./format";
import { FORM_TOKEN_FIELD } from "./operator-cookie";

const REFRESH_MS = 3000;

const STYLE = `
:root{--bg:#f6f7f9;--card:#fff;--ink:#1c2430;--muted:#5f6b7a;--line:#dde2e8;--accent:#2457c5;
--red:#b42318;--red-bg:#fdecea;--amber:#8a5a00;--amber-bg:#fff4d6;--blue:#1f4fb8;--blue-bg:#e6eefc;
--green:#1d6b3a;--green-bg:#e3f4e8;--grey:#4b5563;--grey-bg:#eceff3}
*{box-sizing:border-box}body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;
background:var(--bg);color:var(--ink)}a{color:var(--accent)}
header{display:flex;align-items:center;gap:16px;padding:10px 24px;background:#16202e;color:#fff}
header a{color:#fff;text-decoration:none;font-weight:600}header .grow{flex:1}
header form{margin:0}header button{background:transparent;color:#cfd8e3;border:1px solid #4a5a70}
main{max-width:1200px;margin:0 auto;padding:20px 24px 48px}
h1{font-size:20px;margin:0 0 4px}h2{font-size:15px;margin:24px 0 8px}
.sub{color:var(--muted);margin:0 0 16px}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:14px 16px}
table{width:100%;border-collapse:collapse;background:var(--card);border:1px solid var(--line);border-radius:8px}
th,td{text-align:left;padding:7px 10px;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:12px;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);background:#fafbfc}
tr:last-child td{border-bottom:0}code,.mono{font:12.5px ui-monospace,SFMono-Regular,Menlo,monospace}
h1 .mono{font-size:18px}.mono{overflow-wrap:anywhere}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;white-space:nowrap}
.red{color:var(--red);background:var(--red-bg)}.amber{color:var(--amber);background:var(--amber-bg)}
.blue{color:var(--blue);background:var(--blue-bg)}.green{color:var(--green);background:var(--green-bg)}
.grey{color:var(--grey);background:var(--grey-bg)}
.late{color:var(--red);font-weight:600}.muted{color:var(--muted)}
.notice{padding:10px 14px;border-radius:8px;margin:0 0 16px;border:1px solid}
.notice.error{background:var(--red-bg);color:var(--red);border-color:#f5c2bd}
.notice.done{background:var(--green-bg);color:var(--green);border-color:#b7e0c3}
.tabs{display:flex;flex-wrap:wrap;gap:8px;margin:0 0 14px}
.tab{padding:6px 12px;border-radius:8px;border:1px solid var(--line);background:var(--card);text-decoration:none;color:var(--ink)}
.tab.on{border-color:var(--accent);box-shadow:inset 0 0 0 1px var(--accent)}.tab b{margin-left:6px}
form.inline{display:inline}input,select,button{font:inherit;padding:5px 10px;border-radius:6px;border:1px solid var(--line)}
button{cursor:pointer;background:var(--card)}button.primary{background:var(--accent);color:#fff;border-color:var(--accent)}
button.danger,a.danger{color:var(--red)}button.danger.primary{background:var(--red);color:#fff;border-color:var(--red)}
.actions{display:flex;gap:8px;flex-wrap:wrap;margin:12px 0}.actions a{padding:5px 12px;border:1px solid var(--line);border-radius:6px;background:var(--card);text-decoration:none}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(260px,1fr));gap:12px}
dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 12px;margin:0}dt{color:var(--muted)}dd{margin:0}
.empty{padding:28px;text-align:center;color:var(--muted);background:var(--card);border:1px dashed var(--line);border-radius:8px}
.empty strong{display:block;color:var(--ink);margin-bottom:4px}
.hidden-char{background:#fde68a;color:#7c2d12;border-radius:3px;padding:0 2px;font:11px ui-monospace,monospace}
pre{background:#0f1720;color:#e6edf3;padding:12px;border-radius:8px;overflow:auto;max-height:70vh;white-space:pre-wrap}
#live-status{font-size:12px;color:#cfd8e3}
`;

/**
 * Relative times tick every second; the live region is fetched again unless paused or hidden,
 * marked as a refresh so that it does not count as the operator's activity (the idle timeout).
 */
const SCRIPT = `${RELATIVE_TIME_SOURCE}
function tick() {
  var now = Date.now();
  document.querySelectorAll("time[data-rel]").forEach(function (el) {
    var at = Date.parse(el.getAttribute("datetime"));
    if (isNaN(at)) return;
    if (el.dataset.rel === "deadline" && at <= now) {
      el.textContent = "overdue by " + relativeTime(now, at).replace(/^in /, "");
      el.classList.add("late");
    } else el.textContent = relativeTime(at, now);
  });
}
setInterval(tick, 1000);
var refreshMs = Number(document.body.dataset.refreshMs || 0), status = document.getElementById("live-status");
function refresh() {
  if (document.hidden || document.querySelector("dialog[open]")) return;
  fetch(location.href, { headers: { accept: "text/html", "x-console-refresh": "1" }, credentials: "same-origin" }).then(function (r) {
    if (r.redirected || r.status === 401) { location.reload(); return; }
    return r.text().then(function (html) {
      var next = new DOMParser().parseFromString(html, "text/html").getElementById("live");
      var live = document.getElementById("live");
      if (next && live) { live.replaceWith(next); tick(); }
      if (status) status.textContent = "Live · updated " + new Date().toLocaleTimeString();
    });
  }).catch(function () { if (status) status.textContent = "Live · refresh failed, retrying"; });
}
if (refreshMs > 0) setInterval(refresh, refreshMs);`;

export const Page: FC<{
  title: string;
  nonce: string;
  /** The signed-in operator's form token; "" when signed out. */
  formToken: string;
  live?: boolean;
  children?: Child;
}> = ({ title, nonce, formToken, live, children }) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>{`${title} · exec-inbox console`}</title>
      <link rel="icon" href={FAVICON_PATH} type="image/svg+xml" />
      <style nonce={nonce} dangerouslySetInnerHTML={{ __html: STYLE }} />
    </head>
    <body data-refresh-ms={live ? String(REFRESH_MS) : "0"}>
      <header>
        <a href="/console">exec-inbox · operators</a>
        <span class="grow" />
        {live ? <span id="live-status">Live · refreshes every {REFRESH_MS / 1000} s</span> : null}
        {formToken !== "" ? (
          <form method="post" action="/console/sign-out">
            <FormToken value={formToken} />
            <button type="submit">Sign out</button>
          </form>
        ) : null}
      </header>
      <main>{children}</main>
      <script nonce={nonce} dangerouslySetInnerHTML={{ __html: SCRIPT }} />
    </body>
  </html>
);

export const Badge: FC<{ status: BadgeStatus }> = ({ status }) => (
  <span class={`badge ${statusTone(status)}`}>{status.replace("_", " ")}</span>
);

/** A time in words, with the exact instant on hover; the script keeps the words current. */
export const When: FC<{
  iso: string | null | undefined;
  now: number;
  kind?: "ago" | "deadline";
}> = ({ iso, now, kind = "ago" }) => {
  if (iso === null || iso === undefined) return <Dash />;
  const text = kind === "deadline" ? deadline(iso, now) : relativeIso(iso, now);
  const late = kind === "deadline" && Date.parse(iso) <= now;
  return (
    <time datetime={iso} title={iso} data-rel={kind} class={late ? "late" : undefined}>
      {text}
    </time>
  );
};

/** The one way a cell says "nothing here", wherever it is. */
export const Dash: FC = () => <span class="muted">—</span>;

export const Notice: FC<{ error?: string | null; done?: string | null }> = ({ error, done }) => (
  <>
    {error ? (
      <p class="notice error" role="alert">
        {error}
      </p>
    ) : null}
    {done ? (
      <p class="notice done" role="status">
        {done}
      </p>
    ) : null}
  </>
);

export const FormToken: FC<{ value: string }> = ({ value }) => (
  <input type="hidden" name={FORM_TOKEN_FIELD} value={value} />
);

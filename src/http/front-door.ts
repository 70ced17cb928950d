// GET /: what a newcomer opens first — the version, whether the service and its Durable Objects
// answer, and links to the console, the reference and the document. The ping itself is the caller's.
import type { z } from "zod";
import { VERSION } from "../version";
import { FAVICON_PATH } from "./favicon";
import type { frontDoorSchema } from "./schemas/views";

export type FrontDoor = z.input<typeof frontDoorSchema>;

export function frontDoor(objectAnswered: boolean): FrontDoor {
  return {
    service: "exec-inbox",
    version: VERSION,
    health: { worker: "ok", durable_object: objectAnswered ? "ok" : "failing" },
    links: { console: "/console", docs: "/docs", openapi: "/openapi.json", health: "/healthz" },
  };
}

/**
 * HTML only when the client asks for it and does not ask for JSON first: a browser names
 * text/html, curl sends `*\/*` and gets JSON, `Accept: application/json` always gets JSON.
 */
export function wantsHtml(accept: string | undefined): boolean {
  const types = (accept ?? "")
    .split(",")
    .map((part) => part.split(";")[0]?.trim().toLowerCase() ?? "");
  const html = types.indexOf("text/html");
  const json = types.indexOf("application/json");
  return html !== -1 && (json === -1 || html < json);
}

const STYLE = `body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;background:#f6f7f9;color:#1c2430}
main{max-width:640px;margin:48px auto;padding:0 24px}h1{font-size:22px;margin:0 0 4px}
.sub{color:#5f6b7a;margin:0 0 20px}.card{background:#fff;border:1px solid #dde2e8;border-radius:8px;padding:14px 18px;margin:0 0 16px}
dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 14px;margin:0}dt{color:#5f6b7a}dd{margin:0}
.ok{color:#1d6b3a;font-weight:600}.bad{color:#b42318;font-weight:600}ul{margin:0;padding-left:20px}li{margin:4px 0}
a{color:#2457c5}code{font:13px ui-monospace,SFMono-Regular,Menlo,monospace}`;

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

export function frontDoorHtml(door: FrontDoor, nonce: string): string {
  const state = (value: string) =>
    value === "ok" ? '<span class="ok">ok</span>' : `<span class="bad">${escapeHtml(value)}</span>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>exec-inbox ${escapeHtml(door.version)}</title>
<link rel="icon" href="${FAVICON_PATH}" type="image/svg+xml">
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<main>
<h1>exec-inbox</h1>
<p class="sub">An inbox for agents that wait on background commands: a session suspends, the jobs' results arrive, and the agent is resumed with them.</p>
<section class="card" aria-label="Service">
<dl>
<dt>Version</dt><dd><code>${escapeHtml(door.version)}</code></dd>
<dt>Worker</dt><dd>${state(door.health.worker)}</dd>
<dt>Durable Objects</dt><dd>${state(door.health.durable_object)}</dd>
</dl>
</section>
<section class="card" aria-label="Pages">
<ul>
<li><a href="${door.links.console}">Operator console</a> — sessions that need attention (operator token)</li>
<li><a href="${door.links.docs}">API reference</a> — the rendered OpenAPI document</li>
<li><a href="${door.links.openapi}">OpenAPI document</a> — <code>${door.links.openapi}</code></li>
<li><a href="${door.links.health}">Health</a> — <code>${door.links.health}</code></li>
</ul>
</section>
</main>
</body>
</html>
`;
}

/** A page with no script: styles by nonce, the favicon from this origin, nothing else loads. */
export function frontDoorPolicy(nonce: string): string {
  return [
    "default-src 'none'",
    `style-src 'nonce-${nonce}'`,
    "img-src 'self'",
    "form-action 'none'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join("; ");
}

// /docs: Scalar's rendered reference of /openapi.json, its viewer script served by this Worker from
// the installed npm package (the `ASSETS` binding), under a CSP. Rendering is Scalar's; the pin is npm's.
import type { Context } from "hono";
import type { AppEnv } from "./context";
import { FAVICON_PATH } from "./favicon";
import { SCALAR_SCRIPT_PATH } from "./reference-version";

/** Where wrangler.toml's `[assets]` directory (the package's `dist/browser`) holds the bundle. */
const BUNDLE_ASSET = "/standalone.js";

/** The page runs on the console's origin: it may talk to nothing but this origin, frame nothing. */
export function referencePolicy(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    // Scalar sets inline style attributes; styles cannot act, so they are not worth a hash each.
    "style-src 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "form-action 'none'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "object-src 'none'",
  ].join("; ");
}

/**
 * Scalar's options. Everything that would talk to Scalar's own services is off: its fonts, its
 * telemetry, its AI agent and its developer toolbar (share, deploy); the policy refuses them anyway.
 */
const CONFIGURATION = JSON.stringify({
  url: "/openapi.json",
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  showDeveloperTools: "never",
});

/**
 * The fallback line stays when the viewer does not start (script blocked, failed, or switched
 * off), so the page always says where the document is.
 */
function referenceHtml(nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>exec-inbox API</title>
<link rel="icon" href="${FAVICON_PATH}" type="image/svg+xml">
</head>
<body>
<div id="app"><p id="reference-fallback" style="font:15px system-ui,sans-serif;margin:40px">Loading the API reference… If it does not appear, read the OpenAPI document itself: <a href="/openapi.json">/openapi.json</a>.</p></div>
<noscript><p style="font:15px system-ui,sans-serif;margin:40px">The rendered reference needs JavaScript. The OpenAPI document is at <a href="/openapi.json">/openapi.json</a>.</p></noscript>
<script nonce="${nonce}" src="${SCALAR_SCRIPT_PATH}"></script>
<script nonce="${nonce}">
if (window.Scalar && typeof window.Scalar.createApiReference === "function") {
  document.getElementById("app").replaceChildren();
  window.Scalar.createApiReference("#app", ${CONFIGURATION});
} else {
  document.getElementById("reference-fallback").textContent = "";
  document.getElementById("reference-fallback").append(
    "The reference viewer did not load. The OpenAPI document is at ",
    Object.assign(document.createElement("a"), { href: "/openapi.json", textContent: "/openapi.json" }),
    ".",
  );
}
</script>
</body>
</html>
`;
}

export function referencePage(): Response {
  const nonce = crypto.randomUUID();
  return new Response(referenceHtml(nonce), {
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": referencePolicy(nonce),
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
      "x-frame-options": "DENY",
    },
  });
}

/** The viewer bundle, from the static assets; nothing else of that directory is reachable. */
export async function referenceScript(c: Context<AppEnv>): Promise<Response> {
  const asset = await c.env.ASSETS.fetch(new URL(BUNDLE_ASSET, c.req.url));
  if (!asset.ok)
    throw new Error(`the Scalar bundle is not among the static assets (${asset.status})`);
  return new Response(asset.body, {
    headers: {
      "content-type": "text/javascript; charset=utf-8",
      "cache-control": "public, max-age=31536000, immutable",
      "x-content-type-options": "nosniff",
    },
  });
}

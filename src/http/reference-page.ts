// /docs: Scalar's rendered reference of /openapi.json, with its script pinned to one exact release
// and checked by Subresource Integrity, under a CSP. The rendering is Scalar's; the pin is ours.
import { Scalar } from "@scalar/hono-api-reference";
import type { Context } from "hono";

/** Bump all three together: npm pack @scalar/api-reference@<v>, sha384 of dist/browser/standalone.js. */
export const SCALAR_VERSION = "1.76.0";
export const SCALAR_SCRIPT = `https://cdn.jsdelivr.net/npm/@scalar/api-reference@${SCALAR_VERSION}/dist/browser/standalone.js`;
export const SCALAR_INTEGRITY =
  "sha384-oH1C0RwqcwbVXkC+r8A+4qRoyEUQdtxAzOwumkxZtQBBcsy61FOoPt7B50OVJYYQ";

/** The page runs on the console's origin: it may talk to nothing but this origin, frame nothing. */
export function referencePolicy(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}' '${SCALAR_INTEGRITY}' ${SCALAR_SCRIPT}`,
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

export async function referencePage(c: Context): Promise<Response> {
  const nonce = crypto.randomUUID();
  const rendered = await Scalar({
    url: "/openapi.json",
    pageTitle: "exec-inbox API",
    cdn: SCALAR_SCRIPT,
    nonce,
    // Fonts would come from Scalar's font host, which the policy refuses anyway.
    withDefaultFonts: false,
    telemetry: false,
  })(c, async () => {});
  const html = (await (rendered as Response).text()).replace(
    `<script src="${SCALAR_SCRIPT}"`,
    `<script src="${SCALAR_SCRIPT}" integrity="${SCALAR_INTEGRITY}" crossorigin="anonymous"`,
  );
  // Scalar's markup is not ours: if it stops matching, refuse to serve an unchecked script.
  if (!html.includes(`integrity="${SCALAR_INTEGRITY}"`)) {
    throw new Error("the Scalar page no longer loads its script where the integrity is added");
  }
  return new Response(html, {
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": referencePolicy(nonce),
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
      "x-frame-options": "DENY",
    },
  });
}

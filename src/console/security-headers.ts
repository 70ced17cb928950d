// The security headers of the console: one set for its pages (with the page's script nonce), and
// the same set on every other answer under /console (404s, 303s, 403s, problem bodies, 405s).
import type { MiddlewareHandler } from "hono";

const policy = (scriptSrc: string): string =>
  [
    "default-src 'none'",
    `script-src ${scriptSrc}`,
    "style-src 'unsafe-inline'",
    "connect-src 'self'",
    "img-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join("; ");

/** What every console answer carries; a page's policy allows its own nonce's script, others none. */
export function consoleSecurityHeaders(nonce: string | null): Record<string, string> {
  return {
    "cache-control": "no-store",
    // Not no-referrer: under it a browser sends `Origin: null` on POSTs and the origin check fails.
    "referrer-policy": "same-origin",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "content-security-policy": policy(nonce === null ? "'none'" : `'nonce-${nonce}'`),
  };
}

export const isConsolePath = (path: string): boolean =>
  path === "/console" || path.startsWith("/console/");

/**
 * Registered first on the app, so it also wraps what answers before the console's own routes (the
 * size guard, the 405s, the not-found handler, errors): a header a page set already is kept.
 */
export const consoleHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  if (!isConsolePath(c.req.path)) return;
  const missing = Object.entries(consoleSecurityHeaders(null)).filter(
    ([name]) => !c.res.headers.has(name),
  );
  if (missing.length === 0) return;
  // A response built elsewhere may have immutable headers: copy it before adding to them.
  const res = new Response(c.res.body, c.res);
  for (const [name, value] of missing) res.headers.set(name, value);
  c.res = res;
};

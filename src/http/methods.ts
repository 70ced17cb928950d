// Answers a method a known path does not serve (405 with Allow) and OPTIONS (204 with Allow), from
// the routes the app registered. A path no route has is left to the app's 404.
import type { Hono, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import { TrieRouter } from "hono/router/trie-router";
import { problem } from "../../shared/problem";
import type { AppEnv } from "./context";

// The order Allow lists them in; HEAD is served by Hono wherever GET is.
const ORDER = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/** The methods each path of `app` serves, in Hono's own matching (the table has no hand copy). */
function servedMethods(app: Hono<AppEnv>): (path: string) => string[] {
  const router = new TrieRouter<string>();
  for (const route of app.routes) {
    // Middleware is registered for ALL methods; it serves nothing by itself.
    if (route.method !== "ALL") router.add("ALL", route.path, route.method);
  }
  return (path) => {
    const methods = new Set(router.match("GET", path)[0].map(([method]) => method));
    if (methods.size === 0) return [];
    if (methods.has("GET")) methods.add("HEAD");
    methods.add("OPTIONS");
    return ORDER.filter((method) => methods.has(method));
  };
}

/**
 * Runs before authentication: which methods a path takes is what /openapi.json already tells
 * anyone, and a runner or host that used the wrong method learns that first.
 */
export function allowedMethods(app: Hono<AppEnv>): MiddlewareHandler<AppEnv> {
  // Built on first use: every route is registered by then, and the table never changes after.
  let served: ((path: string) => string[]) | undefined;
  return async (c, next) => {
    // Hono matched this method and path already: a route of its own (not middleware, which is
    // registered for ALL) means the method is served, and the table need not be searched.
    if (c.req.method !== "OPTIONS" && matchedRoutes(c).some((route) => route.method !== "ALL"))
      return next();
    served ??= servedMethods(app);
    const allow = served(c.req.path);
    const method = c.req.method;
    if (allow.length === 0 || (allow.includes(method) && method !== "OPTIONS")) return next();
    const header = allow.join(", ");
    if (method === "OPTIONS")
      return new Response(null, { status: 204, headers: { allow: header } });
    const answer = problem(
      "method_not_allowed",
      `${method} is not served at ${c.req.path}; it takes ${header}`,
    );
    answer.headers.set("allow", header);
    return answer;
  };
}

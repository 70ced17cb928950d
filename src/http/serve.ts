// Mounts one route of the table on the app: the checks that answer before zod-openapi's validators
// (path ids → 404, the body read by our own parser), validation failures as problem+json, and
// success answers typed by the route's own response schema. What a handler does is left to it.
import type { Hook, OpenAPIHono, RouteConfig, RouteHandler } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { z } from "zod";
import { issuesDetail, readJson } from "../../shared/body";
import { problem } from "../../shared/problem";
import type { Result } from "../domain/errors";
import type { AppEnv } from "./context";
import type { SuccessBody } from "./routes/common";

type RouteContext<R extends RouteConfig> = Parameters<RouteHandler<R, AppEnv>>[0];

export type { SuccessBody };

type Keys<S> = S extends unknown ? keyof S : never;
type At<S, K> = S extends unknown ? (K extends keyof S ? S[K] : never) : never;
type Element<S> = S extends readonly (infer E)[] ? E : never;

/**
 * The paths in `V` that the schema type `S` does not name (never when none): TypeScript's own
 * check lets a wider value through wherever it is not a fresh literal, and the answer schemas are
 * closed (`additionalProperties: false`), so a field the route does not declare must not compile.
 */
export type UndeclaredFields<V, S, P extends string = "value"> = unknown extends S
  ? never
  : V extends readonly (infer E)[]
    ? UndeclaredFields<E, Element<S>, `${P}[]`>
    : V extends object
      ? {
          [K in keyof V & string]-?: K extends Keys<Extract<S, object>>
            ? UndeclaredFields<V[K], At<Extract<S, object>, K>, `${P}.${K}`>
            : `${P}.${K}`;
        }[keyof V & string]
      : never;

/**
 * Answers the route's success body for `status`, or the failure as problem+json. A value with a
 * field the route does not declare is a compile error naming the field.
 */
export function answer<
  R extends RouteConfig,
  S extends keyof R["responses"] & number,
  V extends SuccessBody<R, S>,
>(
  _route: R,
  status: S,
  result: Result<V>,
  ..._declared: [UndeclaredFields<V, SuccessBody<R, S>>] extends [never]
    ? []
    : [undeclared: UndeclaredFields<V, SuccessBody<R, S>>]
): Response {
  if (!result.ok) return problem(result.code, result.detail);
  return Response.json(result.value, { status });
}

/** A path id no session, job or tenant can have is simply not found (never a 422). */
function notFoundDetail(issues: readonly z.core.$ZodIssue[]): string {
  const failed = new Set(issues.map((issue) => String(issue.path[0])));
  return !failed.has("sid") && failed.has("tenant")
    ? "no such tenant or session"
    : "no such session or job";
}

/** zod-openapi's validators answer through this hook: every failure keeps our problem shape. */
export const problemHook: Hook<unknown, AppEnv, string, Response | undefined> = (result) => {
  if (result.success) return undefined;
  if (result.target === "param") return problem("not_found", notFoundDetail(result.error.issues));
  const { detail, errors } = issuesDetail(result.error);
  return problem("invalid_request", detail, { errors });
};

function pathCheck(params: z.ZodType): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const parsed = params.safeParse(c.req.param());
    if (!parsed.success) return problem("not_found", notFoundDetail(parsed.error.issues));
    await next();
  };
}

/** A query key given twice is ambiguous: refused by name, not as the list zod-openapi reads it as. */
const singleQueryValues: MiddlewareHandler<AppEnv> = async (c, next) => {
  const errors = Object.entries(c.req.queries())
    .filter(([, values]) => values.length > 1)
    .map(([key]) => ({ path: key, message: "given more than once: send it once" }));
  if (errors.length > 0) {
    const detail = errors.map((entry) => `${entry.path}: ${entry.message}`).join("; ");
    return problem("invalid_request", detail, { errors });
  }
  await next();
};

/**
 * Our own body reader runs first so malformed JSON, media types and charsets keep their answers.
 * The validator then finds the parsed value in Hono's body cache, behind a plain JSON content type
 * (zod-openapi would throw on some types our reader accepts, and skip an optional body sent
 * without one).
 */
function bodyFirst(optional: boolean): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const read = await readJson(c, { optional });
    if (!read.ok) return read.response;
    const headers = new Headers(c.req.raw.headers);
    headers.set("content-type", "application/json");
    c.req.raw = new Request(c.req.raw.url, { method: c.req.raw.method, headers });
    c.req.bodyCache.json = Promise.resolve(read.value);
    await next();
  };
}

/**
 * Registers `route` with `handler`. Handlers answer plain Responses (problem+json has no single
 * type per route); `answer` types their success bodies against the route instead.
 */
export function serve<R extends RouteConfig>(
  app: OpenAPIHono<AppEnv>,
  route: R,
  handler: (c: RouteContext<R>) => Promise<Response> | Response,
  /** `rawBody`: the handler streams the body itself (a full output's part), no JSON reader. */
  options: { before?: MiddlewareHandler<AppEnv>[]; rawBody?: boolean } = {},
): void {
  const middleware: MiddlewareHandler<AppEnv>[] = [...(options.before ?? [])];
  const params = route.request?.params;
  if (params !== undefined) middleware.push(pathCheck(params as z.ZodType));
  if (route.request?.query !== undefined) middleware.push(singleQueryValues);
  const body = route.request?.body;
  if (body !== undefined && options.rawBody !== true) {
    middleware.push(bodyFirst(body.required !== true));
  }
  // zod-openapi would type each handler's Response by status; ours are checked by `answer`.
  app.openapi({ ...route, middleware }, handler as never);
}

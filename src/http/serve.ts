// Mounts one route of the table on the app: documented in the OpenAPI registry, its request read and
// checked once by our own reader (path ids → 404, the body by our own parser, every failure as
// problem+json), and success answers typed by the route's own response schema. What a handler
// does is left to it.
import type { OpenAPIHono, RouteConfig, RouteHandler } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
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

/** What an issue about a whole part (an unknown key, say) names it as. */
const WHOLE: Record<Exclude<Target, "param">, string> = {
  query: "(query)",
  header: "(headers)",
  json: "(body)",
};

/** A part that failed its schema: a path id is simply not found, anything else is invalid. */
function refusalOf(target: Target, error: z.ZodError): Response {
  if (target === "param") return problem("not_found", notFoundDetail(error.issues));
  const { detail, errors } = issuesDetail(error, WHOLE[target]);
  return problem("invalid_request", detail, { errors });
}

/** A query key given twice is ambiguous: refused by name, not as the list a validator reads it as. */
function repeatedQueryKeys(c: Context<AppEnv>): Response | null {
  const errors = Object.entries(c.req.queries())
    .filter(([, values]) => values.length > 1)
    .map(([key]) => ({ path: key, message: "given more than once: send it once" }));
  if (errors.length === 0) return null;
  const detail = errors.map((entry) => `${entry.path}: ${entry.message}`).join("; ");
  return problem("invalid_request", detail, { errors });
}

type Target = "param" | "query" | "header" | "json";

/** A part of the request checked against its schema: its parsed value, or the problem to answer. */
function checked(
  target: Target,
  schema: z.ZodType,
  input: unknown,
): { ok: true; value: unknown } | { ok: false; response: Response } {
  const parsed = schema.safeParse(input);
  return parsed.success
    ? { ok: true, value: parsed.data }
    : { ok: false, response: refusalOf(target, parsed.error) };
}

/**
 * The route's one reader of the request, in the order its answers are promised: path ids (404),
 * repeated query keys, the body read by our own parser (size, media type, charset, syntax), then
 * the query, headers and body against their schemas. Each part is read and checked once, and the
 * handler's `c.req.valid(…)` returns what was checked.
 */
function requestReader(
  request: RouteConfig["request"],
  options: { rawBody?: boolean },
): MiddlewareHandler<AppEnv> {
  const params = request?.params as z.ZodType | undefined;
  const query = request?.query as z.ZodType | undefined;
  const headers = request?.headers as z.ZodType | undefined;
  const body = options.rawBody === true ? undefined : request?.body;
  const bodySchema = (body?.content["application/json"] as { schema?: z.ZodType } | undefined)
    ?.schema;
  return async (c, next) => {
    const parts: Array<[Target, unknown]> = [];
    if (params !== undefined) {
      const read = checked("param", params, c.req.param());
      if (!read.ok) return read.response;
      parts.push(["param", read.value]);
    }
    if (query !== undefined) {
      const repeated = repeatedQueryKeys(c);
      if (repeated !== null) return repeated;
    }
    let json: unknown;
    if (body !== undefined) {
      const read = await readJson(c, { optional: body.required !== true });
      if (!read.ok) return read.response;
      json = read.value;
    }
    if (query !== undefined) {
      const read = checked("query", query, c.req.query());
      if (!read.ok) return read.response;
      parts.push(["query", read.value]);
    }
    if (headers !== undefined) {
      const read = checked("header", headers, c.req.header());
      if (!read.ok) return read.response;
      parts.push(["header", read.value]);
    }
    if (bodySchema !== undefined) {
      const read = checked("json", bodySchema, json);
      if (!read.ok) return read.response;
      parts.push(["json", read.value]);
    }
    for (const [target, value] of parts) c.req.addValidatedData(target, value as never);
    await next();
  };
}

/**
 * What a route declares that `requestReader` would not check, so the document would promise a
 * check the service never makes: cookies, a body other than JSON (unless the handler streams it),
 * and a header named in capitals (the reader sees header names in lower case).
 */
function unreadParts(request: RouteConfig["request"], options: { rawBody?: boolean }): string[] {
  const unread: string[] = [];
  if (request?.cookies !== undefined) unread.push("cookies");
  if (options.rawBody !== true) {
    const types = Object.keys(request?.body?.content ?? {});
    unread.push(
      ...types.filter((type) => type !== "application/json").map((type) => `body ${type}`),
    );
  }
  const headers = request?.headers as z.ZodObject | undefined;
  const names = Object.keys(headers?.shape ?? {});
  unread.push(
    ...names.filter((name) => name !== name.toLowerCase()).map((name) => `header ${name}`),
  );
  return unread;
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
  const unread = unreadParts(route.request, options);
  if (unread.length > 0) {
    throw new Error(
      `${route.method} ${route.path} declares what its reader does not check: ${unread.join(", ")}`,
    );
  }
  // Documented as zod-openapi documents it; mounted without its validators, since our reader
  // checks every part once, in the order the answers are promised.
  app.openAPIRegistry.registerPath(route);
  const path = route.path.replaceAll(/\/{(.+?)}/g, "/:$1");
  app.on(
    [route.method],
    [path],
    ...(options.before ?? []),
    requestReader(route.request, options),
    // zod-openapi would type each handler's Response by status; ours are checked by `answer`.
    handler as never,
  );
}

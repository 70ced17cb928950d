// Pieces every area of the route table shares: path parameters, security requirements, the JSON
// media type. The handlers that serve each route live beside the area's table, in src/http/.
import type { RouteConfig } from "@hono/zod-openapi";
import { z } from "zod";
import { idSchema } from "../../domain/schemas";
import { TENANT_PATTERN } from "../../domain/tenants";

export const AGENT = [{ agentToken: [] }];
export const OPERATOR = [{ operatorToken: [] }];
export const CALLBACK = [{ callbackToken: [] }];

export const json = <S extends z.ZodType>(schema: S) => ({
  content: { "application/json": { schema } },
});

export const sessionParams = z.object({
  sid: idSchema.meta({ description: "The session id the agent host chose" }),
});
export const runParams = sessionParams.extend({
  run_id: idSchema.meta({ description: "The run id returned by POST …/runs" }),
});
export const jobParams = sessionParams.extend({
  handle: idSchema.meta({ description: "The runner's handle of the command (its session_id)" }),
});

const tenant = z
  .string()
  .regex(TENANT_PATTERN, "1-64 characters of [a-z0-9-]")
  .meta({ description: "The session's tenant (`default` for bare agent tokens)" });
export const opsParams = sessionParams.extend({ tenant });
export const opsJobParams = jobParams.extend({ tenant });

/** The JSON body a route declares for a status: what a handler must answer with it
 * and what the typed client (client/) reads. */
export type SuccessBody<
  R extends RouteConfig,
  S extends keyof R["responses"],
> = R["responses"][S] extends { content: { "application/json": { schema: infer T } } }
  ? T extends z.ZodType
    ? z.input<T>
    : never
  : never;

// A typed client for operators (routes under /v1/ops, operator token). Its types are the route
// table's (src/http/routes/ops.ts), as the agent's client's are.

import type { SuccessBody } from "../src/http/routes/common";
import type * as ops from "../src/http/routes/ops";
import { Endpoint, queryString, segment } from "./transport";
import type { Query } from "./wire-types";

export class ExecInboxOperatorClient extends Endpoint {
  private session(tenant: string, sessionId: string): string {
    return `/v1/ops/sessions/${segment(tenant)}/${segment(sessionId)}`;
  }

  /** Sessions that need attention; pass `next` back as `cursor` for the next page. */
  listSessions(
    query: Query<typeof ops.opsListSessions> = {},
  ): Promise<SuccessBody<typeof ops.opsListSessions, 200>> {
    return this.call("GET", `/v1/ops/sessions${queryString(query)}`);
  }

  getSession(
    tenant: string,
    sessionId: string,
  ): Promise<SuccessBody<typeof ops.opsGetSession, 200>> {
    return this.call("GET", this.session(tenant, sessionId));
  }

  deleteSession(tenant: string, sessionId: string): Promise<null> {
    return this.call("DELETE", this.session(tenant, sessionId));
  }

  listEvents(
    tenant: string,
    sessionId: string,
    query: Query<typeof ops.opsListEvents> = {},
  ): Promise<SuccessBody<typeof ops.opsListEvents, 200>> {
    return this.call("GET", `${this.session(tenant, sessionId)}/events${queryString(query)}`);
  }

  listJobs(
    tenant: string,
    sessionId: string,
    query: Query<typeof ops.opsListJobs> = {},
  ): Promise<SuccessBody<typeof ops.opsListJobs, 200>> {
    return this.call("GET", `${this.session(tenant, sessionId)}/exec-jobs${queryString(query)}`);
  }

  getJob(
    tenant: string,
    sessionId: string,
    handle: string,
  ): Promise<SuccessBody<typeof ops.opsGetJob, 200>> {
    return this.call("GET", `${this.session(tenant, sessionId)}/exec-jobs/${segment(handle)}`);
  }

  redeliver(tenant: string, sessionId: string): Promise<SuccessBody<typeof ops.opsRedeliver, 200>> {
    return this.call("POST", `${this.session(tenant, sessionId)}/redeliver`);
  }

  expireWait(
    tenant: string,
    sessionId: string,
  ): Promise<SuccessBody<typeof ops.opsExpireWait, 200>> {
    return this.call("POST", `${this.session(tenant, sessionId)}/expire-wait`);
  }

  markLost(
    tenant: string,
    sessionId: string,
    handle: string,
  ): Promise<SuccessBody<typeof ops.opsMarkLost, 200>> {
    return this.call(
      "POST",
      `${this.session(tenant, sessionId)}/exec-jobs/${segment(handle)}/mark-lost`,
    );
  }
}

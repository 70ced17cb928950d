// The WorkerEntrypoint exec-inbox's service binding names: `wake(resume)` finds the session's agent
// by name and hands it the resume. Which namespace holds the agents is the Worker's to say.

import { WorkerEntrypoint } from "cloudflare:workers";
import type { ResumePayload } from "@exec-inbox/client";
import { getAgentByName } from "agents";
import type { ExecInboxAgent, WakeAnswer } from "./exec-inbox-agent";

/** What `execInboxWake` returns, named so the kit's declarations can say it (a class expression's
 * protected members cannot be written in a .d.ts). */
export type ExecInboxWakeClass<Env> = new (
  ctx: ExecutionContext,
  env: Env,
) => WorkerEntrypoint<Env> & { wake(resume: ResumePayload): Promise<WakeAnswer> };

/**
 * `export class ExecInboxWake extends execInboxWake((env) => env.SHELL_AGENT) {}` in the agent's
 * Worker; exec-inbox binds it with `[[services]] … entrypoint = "ExecInboxWake"`. A throw here
 * (the agent unreachable) is a failed attempt, and exec-inbox retries with the same resume_id.
 */
export function execInboxWake<Env, A extends ExecInboxAgent = ExecInboxAgent>(
  namespace: (env: Env) => DurableObjectNamespace<A>,
): ExecInboxWakeClass<Env> {
  return class ExecInboxWakeEntrypoint extends WorkerEntrypoint<Env> {
    async wake(resume: ResumePayload): Promise<WakeAnswer> {
      const agent = await getAgentByName(namespace(this.env), resume.session_id);
      return (await agent.wakeFromInbox(resume)) as WakeAnswer;
    }
  };
}

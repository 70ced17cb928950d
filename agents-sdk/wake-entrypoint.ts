// The WorkerEntrypoint exec-inbox's service binding names: `wake(resume)` finds the session's agent
// by name and hands it the resume. Which namespace holds the agents is the Worker's to say.

import { WorkerEntrypoint } from "cloudflare:workers";
import { getAgentByName } from "agents";
import type { ResumePayload } from "../client";
import type { ExecInboxAgent, WakeAnswer } from "./exec-inbox-agent";

/**
 * `export class ExecInboxWake extends execInboxWake((env) => env.SHELL_AGENT) {}` in the agent's
 * Worker; exec-inbox binds it with `[[services]] … entrypoint = "ExecInboxWake"`. A throw here
 * (the agent unreachable) is a failed attempt, and exec-inbox retries with the same resume_id.
 */
export function execInboxWake<Env, A extends ExecInboxAgent = ExecInboxAgent>(
  namespace: (env: Env) => DurableObjectNamespace<A>,
) {
  return class ExecInboxWakeEntrypoint extends WorkerEntrypoint<Env> {
    async wake(resume: ResumePayload): Promise<WakeAnswer> {
      const agent = await getAgentByName(namespace(this.env), resume.session_id);
      return (await agent.wakeFromInbox(resume)) as WakeAnswer;
    }
  };
}

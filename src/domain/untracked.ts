// A job the MCP endpoint reserved for a command whose callback the runner would not arm: the
// command was asked to stop and no runner will ever report it, so the service ends the job itself
// rather than leave it running for ever (holding a running-jobs slot, with no heartbeat to time out).

import type { Ctx, Decision, Rule } from "./decision";
import type { CompletionReply } from "./jobs";
import { loseRunningJob } from "./operator";
import type { Session } from "./state";

/**
 * The running job gets the result `lost` with no `ended_by` (the service does not know how the
 * command ended, only that no one will say), observed: the model was told at once, in the tool's answer.
 */
export const endUntracked = (
  session: Session,
  cmd: { handle: string; resumeId: string },
  ctx: Ctx,
): Decision<CompletionReply> =>
  loseRunningJob(session, cmd, ctx, { endedBy: null, observed: true });

export const endUntrackedRule: Rule<{ handle: string; resumeId: string }, CompletionReply> = {
  needs: (_, cmd) => ({ jobs: { handles: [cmd.handle], output: true } }),
  decide: ({ session }, cmd, ctx) => endUntracked(session, cmd, ctx),
  events: (cmd, reply) => [
    {
      type: "completion",
      handle: cmd.handle,
      outcome: reply.outcome,
      disposition: reply.outcome === "accepted" ? reply.disposition : null,
    },
  ],
};

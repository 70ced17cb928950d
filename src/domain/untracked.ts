// A job the MCP endpoint reserved for a command whose callback the runner would not arm: the
// command was asked to stop and no runner will ever report it, so the service ends the job itself
// rather than leave it running for ever (holding a running-jobs slot, with no heartbeat to time out).

import type { Ctx, Decision, Rule } from "./decision";
import { fail } from "./errors";
import { type CompletionReply, completeJob } from "./jobs";
import { own } from "./records";
import { type JobResult, jobStatus, type Session } from "./state";

/** `lost` with no `ended_by`: the service does not know how the command ended, only that no one will say. */
const UNTRACKED: JobResult = {
  status: "lost",
  exitCode: null,
  output: "",
  outputTruncated: false,
  outputBytesTotal: 0,
  endedBy: null,
};

/** The running job gets the result `lost`, observed: the model was told at once, in the tool's answer. */
export function endUntracked(
  session: Session,
  cmd: { handle: string; resumeId: string },
  ctx: Ctx,
): Decision<CompletionReply> {
  const job = own(session.jobs, cmd.handle);
  if (job === undefined) return fail("not_found", `no job ${cmd.handle}`);
  if (jobStatus(job) !== "running") {
    return fail("invalid_transition", `job ${cmd.handle} already has a result`);
  }
  return completeJob(
    session,
    {
      lifetime: session.lifetime,
      handle: cmd.handle,
      tokenSeq: job.seq,
      result: UNTRACKED,
      observed: true,
      resumeId: cmd.resumeId,
    },
    ctx,
  );
}

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

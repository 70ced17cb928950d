// The operator actions the console offers, each behind a confirmation: what it calls on the API,
// what the confirmation page says, and the notice after it worked. The API decides if it applies.
export type ActionName = "redeliver" | "expire-wait" | "delete" | "mark-lost" | "cancel";

/** The actions that apply to one job (the others to a session). */
export const JOB_ACTIONS: ReadonlySet<ActionName> = new Set(["mark-lost", "cancel"]);

export interface ConsoleAction {
  readonly label: string;
  readonly method: "POST" | "DELETE";
  /** The /v1/ops path under the session's path. */
  readonly apiSuffix: (handle: string | null) => string;
  readonly explain: string;
  readonly done: string;
  readonly dangerous: boolean;
}

export const ACTIONS: Record<ActionName, ConsoleAction> = {
  redeliver: {
    label: "Redeliver resume",
    method: "POST",
    apiSuffix: () => "/redeliver",
    explain:
      "The failed resume is delivered again under a new resume_id, with a fresh count of attempts. " +
      "Do this once the agent host is healthy again.",
    done: "Redelivery scheduled: a new resume is on its way to the agent host.",
    dangerous: false,
  },
  "expire-wait": {
    label: "Expire wait",
    method: "POST",
    apiSuffix: () => "/expire-wait",
    explain:
      "The armed wait ends now, as if its ceiling had passed: the agent is woken and told that the " +
      "jobs it still waits for have an unknown outcome.",
    done: "The wait was expired: the agent will be woken with an unknown outcome.",
    dangerous: false,
  },
  "mark-lost": {
    label: "Mark job lost",
    method: "POST",
    apiSuffix: (handle) => `/exec-jobs/${encodeURIComponent(handle ?? "")}/mark-lost`,
    explain:
      "The running job gets the result lost (ended_by operator), as if its runner had lost the " +
      "process. A late completion from the runner is then refused. The agent is woken like for any lost job.",
    done: "The job was marked lost.",
    dangerous: true,
  },
  cancel: {
    label: "Cancel job",
    method: "POST",
    apiSuffix: (handle) => `/exec-jobs/${encodeURIComponent(handle ?? "")}/cancel`,
    explain:
      "The runner is asked to end the command: its next heartbeat's answer says so, and it posts " +
      "the result (killed, ended_by kill_request). Nothing changes until then: a runner that never " +
      "heartbeats never learns of it, and the job stays running until its result or its heartbeat timeout.",
    done: "Cancel requested: the runner learns it from its next heartbeat.",
    dangerous: true,
  },
  delete: {
    label: "Delete session",
    method: "DELETE",
    apiSuffix: () => "",
    explain:
      "The session ends for good: its messages, jobs, inbox, timers and audit trail are deleted, " +
      "and completions for it are refused from now on. This cannot be undone.",
    done: "The session was deleted.",
    dangerous: true,
  },
};

export const isActionName = (value: string): value is ActionName => Object.hasOwn(ACTIONS, value);

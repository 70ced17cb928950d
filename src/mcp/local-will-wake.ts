// LOCAL STAND-IN, to be replaced by the shared domain function that decides a session's wake path
// (`wake.via`) at merge: whether a result that should wake this session would reach its agent.

/** What the wake path reads of a session: its own targets, and the tenant's default webhook. */
export interface WakeTargets {
  readonly resumeUrl: string | null;
  readonly resumeBinding: string | null;
  /** The tenant's RESUME_WEBHOOK_URL (its own, or the deployment's for the default tenant). */
  readonly tenantWebhookUrl: string | null;
}

/** True exactly when some target would take the wake: a binding, a resume_url, or the default. */
export const localWillWake = (targets: WakeTargets): boolean =>
  targets.resumeBinding !== null || targets.resumeUrl !== null || targets.tenantWebhookUrl !== null;

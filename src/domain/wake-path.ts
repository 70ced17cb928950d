// How a result that should wake a session would reach its agent, decided as delivery.ts delivers:
// the session's resume_url, its resume binding, else its tenant's default webhook, else nothing.
// Whether the Worker's env holds a binding is the shell's to tell (`bindingWakes`).
import { checkResumeUrl } from "./resume-url";
import type { Core } from "./state";

/** What the session view shows as `wake.via`, and what `will_wake` is true for (not null). */
export type WakeVia = "webhook" | "binding" | null;

/** The settings of the session's tenant, as `resumeTargetsFor` resolves them. */
export interface WakeTargets {
  /** RESUME_SIGNING_SECRET: without it every webhook attempt fails (resume-webhook.ts). */
  readonly resumeSigningSecret: string | null;
  readonly resumeWebhookUrl: string | null;
  readonly resumeUrlAllowlist: readonly string[];
  readonly resumeBindingAllowlist: readonly string[];
}

/**
 * Null wherever a delivery could not start: a binding off the allowlist or absent from the env
 * (every `wake` call would fail), a webhook without RESUME_SIGNING_SECRET to sign it, a resume_url
 * whose origin the allowlist no longer lists, or no URL at all. A binding session never falls back
 * to a webhook, exactly as delivery.ts does. Whether the bound target has a `wake()` method the
 * service cannot check: a bound, allowed binding counts.
 */
export function wakePath(
  session: Pick<Core, "resumeUrl" | "resumeBinding">,
  targets: WakeTargets,
  bindingWakes: (binding: string) => boolean,
): WakeVia {
  if (session.resumeBinding !== null) {
    const usable =
      targets.resumeBindingAllowlist.includes(session.resumeBinding) &&
      bindingWakes(session.resumeBinding);
    return usable ? "binding" : null;
  }
  if (targets.resumeSigningSecret === null) return null;
  if (session.resumeUrl !== null) {
    return checkResumeUrl(session.resumeUrl, targets.resumeUrlAllowlist).ok ? "webhook" : null;
  }
  return targets.resumeWebhookUrl === null ? null : "webhook";
}

/** `will_wake` of a reservation's answer (and of the MCP tool's): exactly when a path exists. */
export const willWake = (via: WakeVia): boolean => via !== null;

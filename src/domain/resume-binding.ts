// Checks a session's resume_binding (a service binding of this Worker that exposes `wake`) against
// the deployment's and the tenant's binding allowlist. Calling the binding is left to the shell.

/** A binding name as wrangler declares it: a JavaScript identifier, at most 64 characters. */
export const BINDING_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

type ResumeBindingCheck = { ok: true; binding: string } | { ok: false; reason: string };

/**
 * Only a name the allowlist lists may be named: the Worker's env also holds bindings that are no
 * agent (the session objects, the index), and the allowlist is what keeps a session off them.
 */
export function checkResumeBinding(
  binding: string,
  allowlist: readonly string[],
): ResumeBindingCheck {
  if (!BINDING_NAME_PATTERN.test(binding)) {
    return { ok: false, reason: "resume_binding is not a binding name ([A-Za-z_][A-Za-z0-9_]*)" };
  }
  return allowlist.includes(binding)
    ? { ok: true, binding }
    : { ok: false, reason: `resume_binding ${binding} is not in RESUME_BINDING_ALLOWLIST` };
}

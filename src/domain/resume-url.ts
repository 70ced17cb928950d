// Checks a URL a session names (its resume_url, its runner's url) against an origin allowlist on
// its parsed form (anti-SSRF). Fetching, and refusing redirects, is left to the caller's shell.

const DEFAULT_PORTS: Readonly<Record<string, string>> = { "http:": "80", "https:": "443" };

interface Origin {
  readonly protocol: string;
  readonly hostname: string;
  readonly port: string;
}

function effectivePort(url: URL): string {
  return url.port === "" ? (DEFAULT_PORTS[url.protocol] ?? "") : url.port;
}

function parseEntry(entry: string): Origin | null {
  // `*` is allowed for the port only; swap it for a parseable placeholder.
  const wildcard = /:\*$/.test(entry);
  try {
    const url = new URL(wildcard ? entry.replace(/:\*$/, "") : entry);
    return {
      protocol: url.protocol,
      hostname: url.hostname,
      port: wildcard ? "*" : effectivePort(url),
    };
  } catch {
    return null;
  }
}

/** True when an allowlist entry is an http(s) origin: scheme://host, optional port or `:*`. */
export function isAllowlistEntry(entry: string): boolean {
  const origin = parseEntry(entry);
  if (origin === null || (origin.protocol !== "http:" && origin.protocol !== "https:"))
    return false;
  const url = new URL(entry.replace(/:\*$/, ""));
  return (
    url.username === "" &&
    url.password === "" &&
    url.pathname === "/" &&
    url.search === "" &&
    url.hash === ""
  );
}

type AllowedUrlCheck = { ok: true; url: string } | { ok: false; reason: string };

/** Names a check's refusals: the field checked and the allowlist it is held to. */
interface AllowlistUse {
  readonly field: string;
  readonly listName: string;
}

/** Scheme, host and port must match an entry; user info is refused whatever the list says. */
export function checkAllowedUrl(
  raw: string,
  allowlist: readonly string[],
  use: AllowlistUse,
): AllowedUrlCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: `${use.field} is not an absolute URL` };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return { ok: false, reason: `${use.field} must use http or https` };
  }
  if (url.username !== "" || url.password !== "") {
    return { ok: false, reason: `${use.field} must not carry user info` };
  }
  const port = effectivePort(url);
  const allowed = allowlist.some((entry) => {
    const origin = parseEntry(entry);
    return (
      origin !== null &&
      origin.protocol === url.protocol &&
      origin.hostname === url.hostname &&
      (origin.port === "*" || origin.port === port)
    );
  });
  return allowed
    ? { ok: true, url: url.toString() }
    : { ok: false, reason: `${use.field} origin ${url.origin} is not in ${use.listName}` };
}

export const checkResumeUrl = (raw: string, allowlist: readonly string[]): AllowedUrlCheck =>
  checkAllowedUrl(raw, allowlist, { field: "resume_url", listName: "RESUME_URL_ALLOWLIST" });

/** A runner's base URL: allowed, and with no query or fragment (the API's paths are appended). */
export function checkRunnerUrl(raw: string, allowlist: readonly string[]): AllowedUrlCheck {
  const checked = checkAllowedUrl(raw, allowlist, {
    field: "runner.url",
    listName: "RUNNER_URL_ALLOWLIST",
  });
  // In the parsed form, `?` and `#` appear only as the query's and the fragment's delimiters.
  if (checked.ok && (checked.url.includes("?") || checked.url.includes("#"))) {
    return {
      ok: false,
      reason:
        "runner.url must carry no query or fragment: the runner's API paths are appended to it",
    };
  }
  return checked;
}

// Checks a session's resume_url against RESUME_URL_ALLOWLIST on its parsed form (anti-SSRF).
// Fetching, and refusing redirects, is left to the delivery shell.

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

type ResumeUrlCheck = { ok: true; url: string } | { ok: false; reason: string };

export function checkResumeUrl(raw: string, allowlist: readonly string[]): ResumeUrlCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: "resume_url is not an absolute URL" };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return { ok: false, reason: "resume_url must use http or https" };
  }
  if (url.username !== "" || url.password !== "") {
    return { ok: false, reason: "resume_url must not carry user info" };
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
    : { ok: false, reason: `resume_url origin ${url.origin} is not in RESUME_URL_ALLOWLIST` };
}

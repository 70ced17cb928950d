// Refuses `npm run deploy` while production would run on the local development secrets
// (or on none): checks the secrets already set on the deployed Worker with `wrangler secret list`.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

const REQUIRED = ["AGENT_TOKENS", "CALLBACK_SECRETS", "RESUME_SIGNING_SECRET"];
const devValues = new Map(
  readFileSync(".dev.vars.example", "utf8")
    .split("\n")
    .filter((line) => /^[A-Z_]+=/.test(line))
    .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1).trim()]),
);

function refuse(reason) {
  console.error(`deploy refused: ${reason}`);
  console.error(
    "Set production secrets first: npx wrangler secret put AGENT_TOKENS (and CALLBACK_SECRETS, RESUME_SIGNING_SECRET).",
  );
  process.exit(1);
}

const toml = readFileSync("wrangler.toml", "utf8");
for (const name of REQUIRED) {
  if (new RegExp(`^\\s*${name}\\s*=`, "m").test(toml))
    refuse(`${name} must not be in wrangler.toml [vars]`);
}
// The loopback resume allowlist is for local runs (.dev.vars.example); production allows only the
// agent hosts it names. Everything in wrangler.toml is deployed ([vars] and its sub-tables such as
// [vars.TENANT_SETTINGS.acme] alike), so no line of it but a comment may name a loopback host.
const loopback = /(?:localhost|127(?:\.\d{1,3}){3}|\[::1\]|0\.0\.0\.0)/i;
const deployed = toml.split("\n").filter((line) => !/^\s*#/.test(line));
const offending = deployed.find((line) => loopback.test(line));
if (offending !== undefined) refuse(`wrangler.toml names a loopback host: ${offending.trim()}`);
// The session index's D1 database is made per account; the committed id is only a placeholder.
if (/^\s*database_id\s*=\s*"0{8}-0{4}-0{4}-0{4}-0{12}"/m.test(toml)) {
  refuse(
    "wrangler.toml has the placeholder D1 database_id: run `npx wrangler d1 create exec-inbox-index` and put the id it prints there",
  );
}
for (const [name, value] of devValues) {
  if (process.env[name] === value) refuse(`${name} in this shell is the local development value`);
}

let listed;
try {
  listed = JSON.parse(
    execFileSync("npx", ["wrangler", "secret", "list", "--format", "json"], { encoding: "utf8" }),
  );
} catch {
  refuse(
    "could not list the Worker's secrets (wrangler login? first deploy: put the secrets first)",
  );
}
const names = new Set(listed.map((secret) => secret.name));
const missing = REQUIRED.filter((name) => !names.has(name));
if (missing.length > 0) refuse(`secrets not set in production: ${missing.join(", ")}`);
console.log("deploy guard: production secrets are set and the development values are not in use.");

// What `wrangler deploy` would ship: the [vars] of wrangler.toml are deployed as they are, so local
// conveniences (a loopback resume allowlist) belong in .dev.vars.example, which only local runs load.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { readConfig } from "../../src/domain/config";
import { devVar } from "../support/local-stack";

/** The `[vars]` table of wrangler.toml as written: `KEY = "value"` lines up to the next table. */
function deployedVars(): Record<string, string> {
  const toml = readFileSync("wrangler.toml", "utf8");
  const start = toml.search(/^\[vars\]\s*$/m);
  if (start < 0) return {};
  const table = toml.slice(start).split("\n").slice(1);
  const end = table.findIndex((line) => /^\s*\[/.test(line));
  const vars: Record<string, string> = {};
  for (const line of end < 0 ? table : table.slice(0, end)) {
    const entry = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"([^"]*)"/.exec(line);
    if (entry?.[1] !== undefined) vars[entry[1]] = entry[2] ?? "";
  }
  return vars;
}

const LOOPBACK = /(?:^|[/,\s])(?:localhost|127(?:\.\d{1,3}){3}|\[::1\]|0\.0\.0\.0)(?:[:/,\s]|$)/i;

/** Runs the deploy guard in a directory holding the given wrangler.toml; it must refuse first. */
function guardIn(toml: string): { status: number | null; stderr: string } {
  const dir = mkdtempSync(join(tmpdir(), "exec-inbox-guard-"));
  try {
    writeFileSync(join(dir, "wrangler.toml"), toml);
    copyFileSync(".dev.vars.example", join(dir, ".dev.vars.example"));
    const run = spawnSync(process.execPath, [resolve("scripts/deploy-guard.mjs")], {
      cwd: dir,
      encoding: "utf8",
      env: { PATH: process.env.PATH ?? "" },
      timeout: 20_000,
    });
    return { status: run.status, stderr: run.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("the deployed configuration", () => {
  it("wrangler.toml [vars] names no loopback origin", () => {
    const vars = deployedVars();
    expect(Object.keys(vars).length).toBeGreaterThan(0);
    for (const [name, value] of Object.entries(vars)) {
      expect(LOOPBACK.test(value), `${name} = "${value}"`).toBe(false);
    }
  });

  it("no line of wrangler.toml but a comment names a loopback host (sub-tables of [vars] are deployed too)", () => {
    const lines = readFileSync("wrangler.toml", "utf8")
      .split("\n")
      .filter((line) => !/^\s*#/.test(line));
    expect(lines.filter((line) => LOOPBACK.test(line))).toEqual([]);
  });

  it("the deploy guard refuses a loopback origin in [vars] and in a [vars.…] sub-table", () => {
    const base = readFileSync("wrangler.toml", "utf8");
    for (const extra of [
      '\n[vars]\nRESUME_URL_ALLOWLIST = "http://127.0.0.1:*"\n',
      '\n[vars.TENANT_SETTINGS.acme]\nresume_url_allowlist = ["http://localhost:*"]\n',
    ]) {
      const toml = extra.startsWith("\n[vars]\n")
        ? base.replace(/^\[vars\]\s*$/m, extra.trim())
        : `${base}${extra}`;
      const guarded = guardIn(toml);
      expect(guarded.status).toBe(1);
      expect(guarded.stderr).toContain("loopback");
    }
  });

  it("the loopback check recognises the origins it must refuse", () => {
    for (const value of [
      "http://127.0.0.1:*",
      "https://hooks.example,http://localhost:*",
      "http://[::1]:8080",
      "http://0.0.0.0:*",
    ]) {
      expect(LOOPBACK.test(value), value).toBe(true);
    }
    expect(LOOPBACK.test("https://hooks.example.com,https://agents.example:8443")).toBe(false);
  });

  it("local runs get the loopback allowlist from .dev.vars.example, production none of it", () => {
    expect(devVar("RESUME_URL_ALLOWLIST")).toBe("http://127.0.0.1:*,http://localhost:*");
    expect(readConfig(deployedVars()).resumeUrlAllowlist).not.toContain("http://127.0.0.1:*");
  });
});

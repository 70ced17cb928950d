// Serves a Worker built by `wrangler deploy --dry-run` on workerd through Miniflare's API, with no
// dev proxy in front: the runtime's floor here, and the shape of a self-hosted deployment.
// Building and persistence are here; which bindings a Worker gets is the caller's.
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { convertV4MiniflareOptions, Miniflare, type V4MiniflareOptions } from "miniflare";
import { devVar } from "../../test/support/local-stack";
import { ownWorkerdPids } from "./proc";

/** Bundles the Worker of `projectDir` into `outDir` (inside the project: Miniflare refuses `..`). */
export function buildWorker(projectDir: string, outDir: string): string {
  mkdirSync(outDir, { recursive: true });
  execFileSync(
    join(process.cwd(), "node_modules/.bin/wrangler"),
    ["deploy", "--dry-run", "--outdir", relative(projectDir, outDir)],
    { cwd: projectDir, stdio: "ignore", env: { ...process.env, WRANGLER_SEND_METRICS: "false" } },
  );
  const script = readdirSync(outDir).find((name) => name.endsWith(".js"));
  if (script === undefined) throw new Error(`no bundle in ${outDir}`);
  return relative(process.cwd(), join(outDir, script));
}

/**
 * The modules of a bundle `buildWorker` wrote: the script, and the index's schema files the build
 * writes beside it, imported as text (wrangler's default rule for .sql). Miniflare 5 takes no
 * module rules, so each is named.
 */
export function builtModules(scriptPath: string) {
  const dir = dirname(scriptPath);
  const texts = readdirSync(dir).filter((name) => name.endsWith(".sql"));
  return {
    modulesRoot: dir,
    modules: [
      { type: "ESModule" as const, path: scriptPath },
      ...texts.map((name) => ({ type: "Text" as const, path: join(dir, name) })),
    ],
  };
}

export interface ServedWorker {
  /** Through Miniflare's entry worker (what `wrangler dev`'s runtime process serves too). */
  readonly base: string;
  /** The same Worker on its own workerd socket, without the entry worker. */
  readonly directBase: string;
  readonly miniflare: Miniflare;
  /** The workerd processes serving it. */
  readonly pids: readonly number[];
  stop(): Promise<void>;
}

export async function serveWorker(options: V4MiniflareOptions): Promise<ServedWorker> {
  const before = new Set(ownWorkerdPids());
  const miniflare = new Miniflare(
    convertV4MiniflareOptions({
      host: "127.0.0.1",
      port: 0,
      unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }],
      ...options,
    } as V4MiniflareOptions),
  );
  const url = await miniflare.ready;
  return {
    base: url.origin,
    directBase: (await miniflare.unsafeGetDirectURL()).origin,
    miniflare,
    pids: ownWorkerdPids().filter((pid) => !before.has(pid)),
    stop: () => miniflare.dispose(),
  };
}

/** The settings `npm start` uses (`.dev.vars.example` and `[vars]`), plus `extra`. */
export function execInboxBindings(extra: Record<string, string> = {}): Record<string, string> {
  const vars: Record<string, string> = {};
  const toml = readFileSync("wrangler.toml", "utf8");
  const section = toml.split("[vars]")[1]?.split("\n[")[0] ?? "";
  for (const [, key, value] of section.matchAll(/^(\w+)\s*=\s*"([^"]*)"/gm)) {
    if (key !== undefined && value !== undefined) vars[key] = value;
  }
  for (const key of [
    "AGENT_TOKENS",
    "OPERATOR_TOKENS",
    "CALLBACK_SECRETS",
    "RESUME_SIGNING_SECRET",
    "RESUME_URL_ALLOWLIST",
    "RUNNER_URL_ALLOWLIST",
  ]) {
    vars[key] = devVar(key);
  }
  return { ...vars, ...extra };
}

/** exec-inbox's own Worker on Miniflare: the session objects and the index, persisted in `stateDir`. */
export async function serveExecInbox(
  scriptPath: string,
  stateDir: string,
  extra: Record<string, string> = {},
  options: { inspectorPort?: number; preventEviction?: boolean } = {},
): Promise<ServedWorker> {
  const { preventEviction, ...rest } = options;
  return serveWorker({
    ...rest,
    ...builtModules(scriptPath),
    compatibilityDate: "2026-11-17",
    compatibilityFlags: ["nodejs_compat"],
    bindings: execInboxBindings(extra),
    durableObjects: {
      SESSIONS: {
        className: "SessionObject",
        useSQLite: true,
        // Idle objects stay open instead of closing 10 s after their last request: what stays
        // open is then bounded by memory, not by how fast this machine gets round to them.
        ...(preventEviction === true ? { unsafePreventEviction: true } : {}),
      },
    },
    d1Databases: { INDEX: "exec-inbox-index" },
    // Miniflare 5 keeps every resource under one root (`do/`, `d1/`, `r2/`, `workflows/` in it).
    resourcePersistencePath: stateDir,
  });
}

/** bench/floor-worker: the runtime's floors (no-op route, no-op object call, one committed row). */
export async function serveFloorWorker(stateDir: string): Promise<ServedWorker> {
  return serveWorker({
    modules: true,
    scriptPath: buildWorker("bench/floor-worker", ".bench/floor-worker"),
    compatibilityDate: "2026-11-17",
    durableObjects: { FLOOR: { className: "Floor", useSQLite: true } },
    // Miniflare 5 keeps every resource under one root (`do/`, `d1/`, `r2/`, `workflows/` in it).
    resourcePersistencePath: stateDir,
  });
}

// The client and the kits are npm packages: each one packed (`npm pack`, which builds it) and its
// tarball installed into a project outside the repository, where plain `tsc` type-checks a consumer
// of them and Node runs it. A tarball that reaches for a file outside itself fails here.
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const TSC = join(ROOT, "node_modules/.bin/tsc");
const run = promisify(execFile);

/** Workspace folder → the package it packs. */
const PACKAGES = {
  client: "@exec-inbox/client",
  agent: "@exec-inbox/ai-sdk",
  "openai-agents": "@exec-inbox/openai-agents",
  "agents-sdk": "@exec-inbox/agents-sdk",
} as const;

const rootManifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
/** The consumer's own type packages, at the versions the repository uses. */
const devTypes = (name: string) => `${name}@${rootManifest.devDependencies[name]}`;

// A Node consumer: the client, the AI SDK kit and the OpenAI Agents kit, used together. The kit
// takes the consumer's client: one `ExecInboxClient` type across packages (it has private members,
// so two copies of it would not be assignable to each other).
const NODE_CONSUMER = `
import { ExecInboxClient, ExecInboxError, type SessionView } from "@exec-inbox/client";
import { ExecInboxOperatorClient } from "@exec-inbox/client/operator";
import { AgentKit, type ConversationStore, RunnerClient, scriptedModel } from "@exec-inbox/ai-sdk";
import { openAiAgentsTurn } from "@exec-inbox/openai-agents";

const inbox = new ExecInboxClient({ baseUrl: "http://127.0.0.1:9", token: "agent-token" });
const kit = new AgentKit({
  inbox,
  runner: new RunnerClient({ baseUrl: "http://127.0.0.1:9", token: "runner-token" }),
  store: {} as ConversationStore,
  resumeSigningSecret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  resumeUrl: "http://127.0.0.1:9/resume",
  model: () => scriptedModel(),
});
const status = (session: SessionView): SessionView["status"] => session.status;
// @ts-expect-error a session's status is one of the service's, not any string
const unknown: SessionView["status"] = "no-such-status";

console.log(
  JSON.stringify({
    client: inbox instanceof ExecInboxClient,
    operator: typeof ExecInboxOperatorClient,
    error: new ExecInboxError({ status: 404, code: "not_found", detail: "", type: "", title: "" }).name,
    kit: kit instanceof AgentKit,
    engine: typeof openAiAgentsTurn,
    status: typeof status,
    unknown,
  }),
);
`;

// A Worker consumer of the Agents SDK kit: type-checked only (it runs in workerd, not Node).
const WORKER_CONSUMER = `
import { ExecInboxAgent, type ExecInboxSettings, execInboxWake, RunnerClient } from "@exec-inbox/agents-sdk";
import { scriptedModel } from "@exec-inbox/ai-sdk/scripted-model";
import { ExecInboxClient } from "@exec-inbox/client";

interface Env {
  readonly SHELL_AGENT: DurableObjectNamespace<ShellAgent>;
  readonly EXEC_INBOX: Fetcher;
}
export class ShellAgent extends ExecInboxAgent<Env> {
  protected execInbox(): ExecInboxSettings {
    return {
      inbox: new ExecInboxClient({
        baseUrl: "http://127.0.0.1",
        token: "agent-token",
        fetch: (request) => this.env.EXEC_INBOX.fetch(request),
      }),
      runner: new RunnerClient({ baseUrl: "https://runner.test", token: "runner-token" }),
      model: scriptedModel(),
    };
  }
}
export class ExecInboxWake extends execInboxWake((env: Env) => env.SHELL_AGENT) {}
`;

/**
 * A consumer's tsconfig: Node's module rules, strict, and `skipLibCheck` as `tsc --init` writes it
 * (the `ai` package's own declarations need it: they name modules it does not depend on). A
 * package type that failed to resolve would be `any`, which the consumer's `@ts-expect-error`
 * catches.
 */
const TSCONFIG = (types: string[], files: string[], lib?: string[]) =>
  JSON.stringify({
    compilerOptions: {
      target: "es2023",
      module: "nodenext",
      strict: true,
      skipLibCheck: true,
      noEmit: true,
      types,
      ...(lib === undefined ? {} : { lib }),
    },
    files,
  });

/** Every relative specifier of the package's .js and .d.ts files, with the file it is in. */
function relativeImports(dir: string): { file: string; target: string }[] {
  const found: { file: string; target: string }[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !/\.(js|d\.ts)$/.test(entry.name)) continue;
    const file = join(entry.parentPath, entry.name);
    const text = readFileSync(file, "utf8");
    for (const match of text.matchAll(/(?:from\s*|import\s*\(\s*)["'](\.{1,2}\/[^"']*)["']/g)) {
      found.push({ file, target: resolve(dirname(file), match[1] as string) });
    }
  }
  return found;
}

describe("the packages, installed from their tarballs outside the repository", () => {
  let scratch: string;

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), "exec-inbox-packages-"));
    const tarballs = join(scratch, "tarballs");
    mkdirSync(tarballs);
    const workspaces = Object.keys(PACKAGES).flatMap((dir) => ["-w", dir]);
    const { stdout } = await run(
      "npm",
      ["pack", "--json", "--pack-destination", tarballs, ...workspaces],
      { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 },
    );
    const packed: { name: string; filename: string }[] = JSON.parse(stdout);
    const dependencies = Object.fromEntries(
      packed.map(({ name, filename }) => [name, `file:tarballs/${filename}`]),
    );
    writeFileSync(
      join(scratch, "package.json"),
      JSON.stringify({ name: "consumer", private: true, type: "module", dependencies }),
    );
    // The registry's packages come from npm's cache where it has them (CI's `npm ci` filled it).
    await run(
      "npm",
      [
        "install",
        "--prefer-offline",
        "--ignore-scripts",
        "--no-audit",
        "--no-fund",
        "--save-dev",
        devTypes("@types/node"),
        devTypes("@cloudflare/workers-types"),
      ],
      { cwd: scratch, maxBuffer: 64 * 1024 * 1024 },
    );
  }, 300_000);

  afterAll(() => {
    if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
  });

  it("packs each package with its built files and no TypeScript source", () => {
    for (const name of Object.values(PACKAGES)) {
      const dir = join(scratch, "node_modules", name);
      const files = readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => relative(dir, join(entry.parentPath, entry.name)));
      expect(files, name).toContain("package.json");
      expect(
        files.filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts")),
        name,
      ).toEqual([]);
      expect(
        files.filter((file) => file.endsWith(".js")).length,
        `${name} ships built JavaScript`,
      ).toBeGreaterThan(0);
    }
  });

  it("has no file in a tarball import a path outside its own package", () => {
    for (const name of Object.values(PACKAGES)) {
      const dir = join(scratch, "node_modules", name);
      const imports = relativeImports(dir);
      expect(imports.length, `${name} has relative imports to check`).toBeGreaterThan(0);
      const outside = imports.filter(({ target }) => relative(dir, target).startsWith(".."));
      expect(outside, name).toEqual([]);
    }
  });

  /** What plain `tsc -p config` prints in the consumer's project: nothing when it type-checks. */
  const tscSays = async (config: string): Promise<string> =>
    (await run(TSC, ["-p", config], { cwd: scratch }).catch((error: { stdout: string }) => error))
      .stdout;

  it("type-checks a Node consumer of the client and the kits with plain tsc", async () => {
    writeFileSync(join(scratch, "consumer.ts"), NODE_CONSUMER);
    writeFileSync(join(scratch, "tsconfig.json"), TSCONFIG(["node"], ["consumer.ts"]));
    expect(await tscSays(scratch)).toBe("");
  }, 120_000);

  it("type-checks a Worker consumer of the Agents SDK kit with plain tsc", async () => {
    writeFileSync(join(scratch, "worker.ts"), WORKER_CONSUMER);
    const config = join(scratch, "tsconfig.worker.json");
    writeFileSync(config, TSCONFIG(["@cloudflare/workers-types"], ["worker.ts"], ["es2023"]));
    expect(await tscSays(config)).toBe("");
  }, 120_000);

  it("runs the Node consumer on the built entry points", async () => {
    writeFileSync(join(scratch, "consumer.ts"), NODE_CONSUMER);
    // Node strips the consumer's types itself; what it imports is the packages' JavaScript.
    const { stdout } = await run(process.execPath, ["consumer.ts"], { cwd: scratch });
    expect(JSON.parse(stdout)).toEqual({
      client: true,
      operator: "function",
      error: "ExecInboxError",
      kit: true,
      engine: "function",
      status: "function",
      unknown: "no-such-status",
    });
  }, 60_000);
});

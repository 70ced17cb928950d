// The Worker's `Env` is what `wrangler types` generates from wrangler.toml and .dev.vars.example;
// a committed copy that no longer matches the configuration would type bindings that do not exist.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const GENERATED = "src/worker-configuration.d.ts";

/** The arguments the committed file was generated with: its header names the command. */
function generatorArguments(text: string): string[] {
  const command = /running `wrangler types ([^`]*)`/.exec(text)?.[1];
  if (command === undefined) throw new Error(`${GENERATED} does not name the command that made it`);
  return command.split(" ");
}

describe("the generated Env", () => {
  it("is what wrangler types generates from the configuration now", async () => {
    const committed = readFileSync(GENERATED, "utf8");
    const args = generatorArguments(committed);
    // The path is the one argument that is not an option (wrangler writes it first or last).
    expect(args.filter((arg) => !arg.startsWith("--"))).toEqual([GENERATED]);
    const options = args.filter((arg) => arg.startsWith("--"));
    // Generated in a temp dir, so a killed run leaves nothing in src/ for tsc and biome to pick
    // up. Its imports then point back at src/ from there, and its hash covers those paths: both
    // are brought to the committed file's place before comparing.
    const dir = mkdtempSync(join(tmpdir(), "exec-inbox-env-"));
    const scratch = join(dir, "worker-configuration.d.ts");
    try {
      await promisify(execFile)("npx", ["wrangler", "types", scratch, ...options], {
        timeout: 60_000,
        env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
      });
      const toSrc = relative(dir, resolve(dirname(GENERATED)));
      const placed = (text: string) =>
        text
          .replace(scratch, GENERATED)
          .replaceAll(`import("${toSrc}/`, 'import("./')
          .replace(/ \(hash: [0-9a-f]+\)/, "");
      const fresh = placed(readFileSync(scratch, "utf8"));
      expect(fresh, `${GENERATED} is stale: run \`npm run types\``).toBe(placed(committed));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// The Worker's `Env` is what `wrangler types` generates from wrangler.toml and .dev.vars.example;
// a committed copy that no longer matches the configuration would type bindings that do not exist.
import { execFile } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
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
    expect(args[0]).toBe(GENERATED);
    // Generated beside the committed file, so relative imports in it come out the same.
    const scratch = `src/.worker-configuration-${process.pid}.d.ts`;
    try {
      await promisify(execFile)("npx", ["wrangler", "types", scratch, ...args.slice(1)], {
        timeout: 60_000,
        env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
      });
      const fresh = readFileSync(scratch, "utf8").replace(scratch, GENERATED);
      expect(fresh, `${GENERATED} is stale: run \`npm run types\``).toBe(committed);
    } finally {
      rmSync(scratch, { force: true });
    }
  });
});

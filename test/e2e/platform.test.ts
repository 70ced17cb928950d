// The platform the project pins for itself (docs/platform.md): Node 24 from the registry, one
// workerd for wrangler dev, the tests and the benchmarks.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const manifest = JSON.parse(readFileSync("package.json", "utf8")) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const pinnedNode = manifest.dependencies.node;

/** The machine's own directories first, as in a user's shell: the system Node is found first. */
const SYSTEM_FIRST_PATH = ["/usr/local/bin", "/usr/bin", "/bin", process.env.PATH].join(":");

describe("the pinned platform", () => {
  it("pins Node 24 exactly, and the tests themselves run on it", () => {
    expect(pinnedNode).toMatch(/^24\.\d+\.\d+$/);
    expect(process.versions.node).toBe(pinnedNode);
  });

  it("npm scripts and npx run the pinned Node even where the machine's Node comes first on PATH", () => {
    const env = { ...process.env, PATH: SYSTEM_FIRST_PATH };
    const viaNpx = execFileSync("npx", ["--no", "--", "node", "-p", "process.versions.node"], {
      env,
      encoding: "utf8",
    });
    expect(viaNpx.trim()).toBe(pinnedNode);
    // A tool started by its `#!/usr/bin/env node` line: wrangler refuses Node < 22.12.
    const wrangler = execFileSync("npx", ["--no", "--", "wrangler", "--version"], {
      env,
      encoding: "utf8",
    });
    expect(wrangler).toContain(manifest.devDependencies.wrangler);
  });

  it("installs one workerd: wrangler dev, the vitest plugin and the benchmarks' Miniflare share it", () => {
    const paths = execFileSync("npm", ["ls", "workerd", "--all", "--parseable"], {
      encoding: "utf8",
    })
      .trim()
      .split("\n")
      .filter((line) => line.endsWith("/workerd"));
    expect(new Set(paths).size).toBe(1);
    const installed = JSON.parse(readFileSync(`${paths[0]}/package.json`, "utf8")) as {
      version: string;
    };
    const wranglers = execFileSync("npm", ["ls", "wrangler", "--all", "--parseable"], {
      encoding: "utf8",
    })
      .trim()
      .split("\n");
    expect(new Set(wranglers).size).toBe(1);
    expect(installed.version).toMatch(/^1\.\d{8}\.\d+$/);
  });
});

// What both demos share (`npm run demo` and `npm run demo -- --agent`): the command they run, a
// timeline printer, and the reference runner served in process.
import { join } from "node:path";
import { serve } from "@hono/node-server";
import { Runner } from "../../runner/src/runner";
import { runnerApp } from "../../runner/src/server";

export const DEMO_COMMAND = "sleep 2; printf inbox-result; exit 7";
export const DEMO_RUNNER_TOKEN = "demo-runner-token";
const started = Date.now();

/** Prints one timeline line, timed from the demo's start. */
export function step(name: string, detail = ""): void {
  const elapsed = String(Date.now() - started).padStart(6);
  console.log(`[+${elapsed} ms] ${name}${detail === "" ? "" : ` — ${detail}`}`);
}

export interface DemoRunner {
  readonly base: string;
  close(): Promise<void>;
}

/** The reference runner on a loopback port, its journal under `stateDir/runner`. */
export function startDemoRunner(stateDir: string, port: number): DemoRunner {
  const runner = new Runner({
    stateDir: join(stateDir, "runner"),
    log: (line) => step("runner", line),
  });
  const server = serve({
    fetch: runnerApp(runner, [DEMO_RUNNER_TOKEN]).fetch,
    port,
    hostname: "127.0.0.1",
  });
  const base = `http://127.0.0.1:${port}`;
  step("runner up", base);
  return {
    base,
    async close() {
      server.close();
      await runner.close(1000);
    },
  };
}

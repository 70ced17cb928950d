// Starts the reference exec runner: `npm run runner`. Settings come from the environment.
import { serve } from "@hono/node-server";
import { Runner } from "./src/runner";
import { runnerApp } from "./src/server";

const port = Number(process.env.RUNNER_PORT ?? 8788);
const host = process.env.RUNNER_HOST ?? "127.0.0.1";
// The default token is for loopback development only, like exec-inbox's .dev.vars.example.
const tokens = (process.env.RUNNER_TOKENS ?? "dev-runner-token").split(",").filter(Boolean);
const runner = new Runner({ stateDir: process.env.RUNNER_STATE_DIR ?? ".runner-state" });
runner.recover();

const server = serve({ fetch: runnerApp(runner, tokens).fetch, port, hostname: host }, (info) => {
  console.log(`[runner] listening on http://${host}:${info.port}`);
});

async function stop(): Promise<void> {
  server.close();
  await runner.close();
  process.exit(0);
}
process.once("SIGTERM", stop);
process.once("SIGINT", stop);

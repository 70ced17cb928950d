// One real `wrangler dev` per describe block, on its own state directory and free port: started
// before the block's tests, stopped (and its state removed) after. What the tests send is theirs.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { startWranglerDev, type WranglerDev } from "./local-stack";

export interface LocalDev {
  /** The running process; another one after `restart`. */
  readonly dev: WranglerDev;
  readonly port: number;
  /** Stops the process and starts another on the same state directory and port, `downMs` later. */
  restart(downMs?: number): Promise<WranglerDev>;
}

export function useWranglerDev(name: string, vars: Record<string, string> = {}): LocalDev {
  // Made in beforeAll, not when the block is collected: a filtered run that skips the block
  // would otherwise leave the directory behind.
  let stateDir = "";
  let running: WranglerDev | undefined;
  let port = 0;
  const started = (): WranglerDev => {
    if (running === undefined) throw new Error("wrangler dev runs only while the block's tests do");
    return running;
  };
  beforeAll(async () => {
    stateDir = mkdtempSync(join(tmpdir(), `exec-inbox-${name}-`));
    running = await startWranglerDev(stateDir, "any", vars);
    port = running.port;
  });
  afterAll(async () => {
    await running?.stop();
    if (stateDir !== "") rmSync(stateDir, { recursive: true, force: true });
  });
  return {
    get dev() {
      return started();
    },
    get port() {
      return port;
    },
    async restart(downMs = 0) {
      await started().stop();
      if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
      running = await startWranglerDev(stateDir, port, vars);
      return running;
    },
  };
}

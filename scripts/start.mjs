// `npm start [-- wrangler dev options]`: the service on loopback with the committed local secrets
// and its state on disk. Each default below gives way to the same option given after `--`; the
// port is PORT when set. What wrangler itself does is left to wrangler. package.json starts it with
// `exec`: npm passes SIGINT and SIGTERM to its child, and a shell in between would die of them
// without passing them on, leaving this process and wrangler running.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { dirname, join } from "node:path";

/** A port nobody holds now: the debugger's, so two services can run side by side. */
const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer().once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(String(port)));
    });
  });

const DEFAULTS = {
  "--ip": "127.0.0.1",
  "--port": process.env.PORT?.trim() || "8787",
  "--env-file": ".dev.vars.example",
  "--persist-to": ".wrangler/state",
};

const given = process.argv.slice(2);
const named = (option) => given.some((arg) => arg === option || arg.startsWith(`${option}=`));
const port =
  given.find((_arg, i) => given[i - 1] === "--port") ??
  given.find((arg) => arg.startsWith("--port="))?.slice(7) ??
  DEFAULTS["--port"];
if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
  console.error(
    `npm start: the port must be a number from 1 to 65535, got ${JSON.stringify(port)}`,
  );
  process.exit(2);
}
if (!named("--inspector-port")) DEFAULTS["--inspector-port"] = await freePort();
const defaults = Object.entries(DEFAULTS).flatMap(([option, value]) =>
  named(option) ? [] : [option, value],
);

const require = createRequire(import.meta.url);
// wrangler's `exports` name no bin: find it from the manifest, as npm links it.
const wranglerManifest = require.resolve("wrangler/package.json");
const { version: wranglerVersion, bin } = JSON.parse(readFileSync(wranglerManifest, "utf8"));
const wrangler = join(dirname(wranglerManifest), bin.wrangler);
const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
console.log(
  `exec-inbox ${version} on http://${named("--ip") ? "<your --ip>" : DEFAULTS["--ip"]}:${port} ` +
    `(wrangler ${wranglerVersion}, Node ${process.versions.node})`,
);

// wrangler, its workerd and its esbuild in a process group of their own, so that a stop reaches all
// of them at once: a signal to wrangler alone can leave esbuild running, or make it print a
// deadlock dump when wrangler exits in the middle of a build.
const child = spawn(process.execPath, [wrangler, "dev", ...defaults, ...given], {
  stdio: "inherit",
  detached: true,
  env: {
    ...process.env,
    // Offline here and on many laptops: no metrics upload, no `Request.cf` download (a placeholder
    // is used), and no banner with an update notice for a release this pin cannot take.
    WRANGLER_SEND_METRICS: process.env.WRANGLER_SEND_METRICS ?? "false",
    CLOUDFLARE_CF_FETCH_ENABLED: process.env.CLOUDFLARE_CF_FETCH_ENABLED ?? "false",
    WRANGLER_HIDE_BANNER: process.env.WRANGLER_HIDE_BANNER ?? "true",
  },
});

/** How long the group has to end after a stop's signal before it is SIGKILLed. */
const GRACE_MS = 10_000;

/** Sends `signal` to the whole group; false when none of it is left. */
function signalGroup(signal) {
  try {
    process.kill(-child.pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** Waits until the group is empty (true) or `ms` has passed (false). */
async function groupGone(ms) {
  const deadline = Date.now() + ms;
  while (signalGroup(0)) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

/** Ends this process by `signal`, as an unhandled one would: npm and the shell see how it stopped. */
function endBy(signal) {
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
}

// npm passes the signal a user sends it to this process, and a terminal's Ctrl-C reaches this
// process group, not wrangler's: both are passed on. A repeat (npm's copy of a Ctrl-C) changes
// nothing; the grace bounds the stop.
let stoppedBy = null;
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    if (stoppedBy !== null) return;
    stoppedBy = signal;
    signalGroup(signal);
    setTimeout(() => signalGroup("SIGKILL"), GRACE_MS).unref();
  });
}

child.on("exit", async (code, signal) => {
  // workerd outlives wrangler for a moment, holding the port: the service has stopped once the
  // group is empty.
  if (!(await groupGone(GRACE_MS))) {
    signalGroup("SIGKILL");
    await groupGone(GRACE_MS);
  }
  const by = stoppedBy ?? signal;
  if (by !== null) endBy(by);
  else process.exit(code ?? 1);
});

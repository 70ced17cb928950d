// The semantics table of `npm run bench`: each case run against exec-inbox, Restate and Workflows,
// printing what each system answered and whether (and with what) the waiting side resumed.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type Callback, ExecInboxError, postCompletion } from "@exec-inbox/client";
import { agentClient } from "../test/support/local-stack";
import { type ArrivalsHost, startArrivalsHost } from "./lib/arrivals-host";
import { serveExecInbox } from "./lib/miniflare-stack";
import { table } from "./lib/report";
import { startRestatePeer } from "./lib/restate-peer";
import { startWorkflowsPeer } from "./lib/workflows-peer";

const CASES = [
  "result sent before the wait is reached",
  "the same result twice",
  "two different results for one wait",
  "result for a waiter that ended / was re-created",
  "process killed between send and resume, restarted",
] as const;

/** How long a case waits for resumes that should (or should not) come. */
const SETTLE_MS = 1_500;

async function execInboxCases(script: string, host: ArrivalsHost): Promise<string[]> {
  const state = mkdtempSync(join(tmpdir(), "exec-inbox-semantics-"));
  let served = await serveExecInbox(script, state);
  const run = Date.now().toString(36);
  // The client follows the runtime across its restart: `served` is read at each call.
  const inbox = () => agentClient(served.base);
  const complete = async (callback: Callback, output: string) => {
    try {
      // The status is read from the answer, not assumed: a duplicate is answered 200.
      let status = 0;
      const reply = await postCompletion(
        callback,
        { status: "completed", exit_code: 0, output },
        {
          fetch: async (request) => {
            const response = await fetch(request);
            status = response.status;
            return response;
          },
        },
      );
      return `${status} ${reply.outcome === "duplicate" ? "duplicate" : reply.disposition}`;
    } catch (error) {
      if (!(error instanceof ExecInboxError)) throw error;
      return `${error.problem.status} ${error.problem.code}`;
    }
  };
  const session = async (label: string, suspend: boolean) => {
    const sid = `sem-${run}-${label}`;
    await inbox().createSession({ id: sid, resume_url: host.url });
    const reserved = await inbox().reserveJob(sid, { handle: "j0", command: "make test" });
    const { run_id: runId } = await inbox().registerRun(sid);
    if (suspend) await inbox().suspend(sid, runId, { waiting_for: ["j0"] });
    return { sid, runId, callback: reserved.callback };
  };
  const wakes = async (sid: string) => {
    await sleep(SETTLE_MS);
    const got = host.arrivals(sid);
    const ids = new Set(got.map((arrival) => arrival.body.resume_id));
    const statuses = got.map((arrival) => arrival.status).join(", ");
    return `${got.length} webhook${got.length === 1 ? "" : "s"}${got.length > 1 ? ` (answered ${statuses})` : ""}, ${ids.size} resume_id`;
  };
  const pulled = async (sid: string) => JSON.stringify((await inbox().getJob(sid, "j0")).output);
  const results: string[] = [];
  try {
    {
      const { sid, runId, callback } = await session("early", false);
      const answer = await complete(callback, "early");
      await inbox().suspend(sid, runId, { waiting_for: ["j0"] });
      results.push(
        `completion ${answer}; the suspend that follows wakes at once: ${await wakes(sid)}`,
      );
    }
    {
      const { sid, callback } = await session("twice", true);
      const answers = [await complete(callback, "same"), await complete(callback, "same")];
      results.push(`${answers.join(", then ")}; ${await wakes(sid)}`);
    }
    {
      const { sid, callback } = await session("conflict", true);
      const answers = [await complete(callback, "first"), await complete(callback, "second")];
      results.push(
        `${answers.join(", then ")}; pull shows ${await pulled(sid)}; ${await wakes(sid)}`,
      );
    }
    {
      const { sid, callback } = await session("ended", true);
      await inbox().deleteSession(sid);
      await inbox().createSession({ id: sid, resume_url: host.url });
      results.push(
        `old token after delete + re-create: ${await complete(callback, "late")}; ${await wakes(sid)}`,
      );
    }
    {
      const { sid, callback } = await session("restart", true);
      host.failNext(1);
      const answer = await complete(callback, "survives");
      await sleep(100);
      await served.stop();
      served = await serveExecInbox(script, state);
      await host.first(sid, 20_000);
      results.push(
        `completion ${answer}; the host answered the first delivery 503, the runtime was stopped before the retry and started again on its state: ${await wakes(sid)}`,
      );
    }
  } finally {
    await served.stop();
    rmSync(state, { recursive: true, force: true });
  }
  return results;
}

async function restateCases(): Promise<string[]> {
  const peer = await startRestatePeer();
  const run = Date.now().toString(36);
  const resumedWith = async (key: string) => {
    const seen = await Promise.race([peer.resumed(key), sleep(SETTLE_MS * 4).then(() => null)]);
    return seen === null ? "never resumed" : `resumed once with ${JSON.stringify(seen.value)}`;
  };
  const results: string[] = [];
  try {
    {
      const key = `sem-${run}-early`;
      const id = await peer.start(key, { delayMs: 1000 });
      const status = await peer.resolve(id, "early");
      results.push(
        `resolve ${status} during a 1 s sleep before the await; ${await resumedWith(key)}`,
      );
    }
    {
      const key = `sem-${run}-twice`;
      const id = await peer.start(key);
      await sleep(300);
      const statuses = [await peer.resolve(id, "same"), await peer.resolve(id, "same")];
      results.push(`resolve ${statuses.join(", then ")}; ${await resumedWith(key)}`);
    }
    {
      const key = `sem-${run}-conflict`;
      const id = await peer.start(key);
      await sleep(300);
      const statuses = [await peer.resolve(id, "first"), await peer.resolve(id, "second")];
      results.push(
        `resolve ${statuses.join(", then ")} (no conflict answer); ${await resumedWith(key)}`,
      );
    }
    {
      const key = `sem-${run}-ended`;
      const id = await peer.start(key);
      await sleep(300);
      await peer.resolve(id, "done");
      await peer.resumed(key);
      await sleep(300);
      results.push(
        `resolve of the ended invocation's awakeable: ${await peer.resolve(id, "late")}`,
      );
    }
    {
      const key = `sem-${run}-restart`;
      const id = await peer.start(key);
      await sleep(300);
      const status = await peer.resolve(id, "survives");
      await peer.restartServer();
      results.push(
        `resolve ${status}; restate-server SIGKILLed at once and started again: ${await resumedWith(key)}`,
      );
    }
  } finally {
    await peer.stop();
  }
  return results;
}

async function workflowsCases(script: string, host: ArrivalsHost): Promise<string[]> {
  const state = mkdtempSync(join(tmpdir(), "workflows-semantics-"));
  let peer = await startWorkflowsPeer(script, state);
  const run = Date.now().toString(36);
  const reports = async (id: string) => {
    await sleep(SETTLE_MS);
    const got = host
      .arrivals(id)
      .map((arrival) => `${arrival.body.wait}: ${JSON.stringify(arrival.body.payload)}`);
    return got.length === 0 ? "never resumed" : `resumed ${got.join("; ")}`;
  };
  const results: string[] = [];
  try {
    {
      const id = `sem-${run}-early`;
      await peer.start(id, { notify: host.url, delayMs: 1000 });
      const sent = await peer.send(id, "early");
      await sleep(1000);
      results.push(
        `sendEvent ${sent.status} during a 1 s step.sleep before the wait; ${await reports(id)}`,
      );
    }
    {
      const id = `sem-${run}-twice`;
      await peer.start(id, { notify: host.url, secondWaitMs: 2000 });
      await sleep(500);
      const statuses = [(await peer.send(id, "same")).status, (await peer.send(id, "same")).status];
      await sleep(1000);
      results.push(
        `sendEvent ${statuses.join(", then ")} (no de-duplication; a second wait for the same type takes the copy); ${await reports(id)}`,
      );
    }
    {
      const id = `sem-${run}-conflict`;
      await peer.start(id, { notify: host.url });
      await sleep(500);
      const statuses = [
        (await peer.send(id, "first")).status,
        (await peer.send(id, "second")).status,
      ];
      const status = await peer.status(id);
      results.push(
        `sendEvent ${statuses.join(", then ")} (no conflict answer); ${await reports(id)}; output ${JSON.stringify(status.output)}`,
      );
    }
    {
      const id = `sem-${run}-ended`;
      await peer.start(id, { notify: host.url });
      await sleep(500);
      await peer.send(id, "done");
      await host.first(id);
      await sleep(300);
      const late = await peer.send(id, "late");
      results.push(
        `sendEvent to the complete instance: ${late.status} (accepted, nothing runs); instance ${(await peer.status(id)).status}`,
      );
    }
    {
      const id = `sem-${run}-restart`;
      await peer.start(id, { notify: host.url });
      await sleep(500);
      const sent = await peer.send(id, "survives");
      await peer.stop();
      peer = await startWorkflowsPeer(script, state);
      await host.first(id, 10_000);
      results.push(
        `sendEvent ${sent.status}; runtime stopped at once and started again on its state: ${await reports(id)}`,
      );
    }
  } finally {
    await peer.stop();
    rmSync(state, { recursive: true, force: true });
  }
  return results;
}

export async function benchSemantics(scripts: { execInbox: string; workflows: string }) {
  const host = await startArrivalsHost();
  try {
    const execInbox = await execInboxCases(scripts.execInbox, host);
    const restate = await restateCases();
    const workflows = await workflowsCases(scripts.workflows, host);
    table(
      [
        "case (measured by running it)",
        "exec-inbox (Miniflare)",
        "Restate awakeable (HTTP/1.1)",
        "Workflows waitForEvent (Miniflare)",
      ],
      CASES.map((name, i) => [name, execInbox[i] ?? "–", restate[i] ?? "–", workflows[i] ?? "–"]),
    );
  } finally {
    await host.close();
  }
}

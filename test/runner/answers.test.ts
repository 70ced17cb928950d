import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/local-stack";
import { killAllRunners } from "./runner-process";
import { runnerCall, startFakeInbox, startRunnerProcess } from "./support";

const root = mkdtempSync(join(tmpdir(), "runner-answers-"));
afterAll(async () => {
  await killAllRunners();
  rmSync(root, { recursive: true, force: true });
});

describe("answers that are not exec-inbox's own (real runner process)", () => {
  it("a 2xx whose body is not JSON settles the completion: it is sent once, not resent for ever", async () => {
    // A proxy or gateway in front of exec-inbox that answers 200 with a page of its own.
    const inbox = await startFakeInbox(
      () => 200,
      () => ({ contentType: "text/html", text: "<html><body>OK, forwarded</body></html>" }),
    );
    const runner = await startRunnerProcess(join(root, "html-2xx"));
    const started = await runnerCall(runner.base, "/v1/exec_command", {
      cmd: "sleep 0.3; echo done",
      yield_time_ms: 250,
    });
    const handle = started.body.session_id as string;
    await runnerCall(runner.base, `/v1/processes/${handle}/callback`, {
      url: inbox.url(handle),
      token: "callback-token",
    });
    await waitFor(() => (inbox.of(handle).length > 0 ? true : undefined));
    // The first retry would come within 0.5 s, the next within 1 s: wait past both.
    await sleep(2000);
    expect(inbox.of(handle)).toHaveLength(1);
    expect(runner.log()).toMatch(
      new RegExp(`callback ${handle}: delivered \\(200\\), body not JSON`),
    );
    await runner.stop();
    await inbox.close();
  });
});

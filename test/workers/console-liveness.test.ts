// The console shows a running job's heartbeat progress and offers cancel behind a confirmation;
// the runner learns of it from its next heartbeat.
import { beforeAll, describe, expect, it } from "vitest";
import { call, createSession, uniqueId } from "../support/api";
import { formTokenOf, getPage, postForm, signedInCookie } from "../support/console";

let COOKIE = "";
beforeAll(async () => {
  COOKIE = await signedInCookie();
});

const html = async (path: string) => (await getPage(path, COOKIE)).text();

describe("the console and liveness", () => {
  it("a running job's last progress shows in the job table, its controls escaped", async () => {
    const sid = uniqueId("console-progress");
    await createSession(sid);
    const reserved = await call("POST", `/v1/sessions/${sid}/exec-jobs`, {
      body: { handle: "build", command: "make", heartbeat_timeout_ms: 60_000 },
    });
    const beat = await call("POST", `/v1/sessions/${sid}/exec-jobs/build/heartbeat`, {
      token: reserved.body.callback.token,
      body: { output_tail: "linking\u202Eevil\n<b>x</b>", output_bytes_total: 4096 },
    });
    expect(beat.status).toBe(200);
    const page = await html(`/console/sessions/default/${sid}`);
    const row = /<tr data-job="build">[\s\S]*?<\/tr>/.exec(page)?.[0] ?? "";
    expect(row).toContain("4096 bytes");
    // The control is shown as its code point, never applied.
    expect(row).not.toContain("\u202E");
    expect(row.replace(/<[^>]+>/g, "")).toContain("linking[U+202E]evil");
    expect(row).toContain("&lt;b&gt;x&lt;/b&gt;");
    expect(row).toContain("confirm/cancel");
  });

  it("cancel is confirmed, then requested: the next heartbeat carries it and the table says so", async () => {
    const sid = uniqueId("console-cancel");
    await createSession(sid);
    const reserved = await call("POST", `/v1/sessions/${sid}/exec-jobs`, {
      body: { handle: "long", command: "sleep 600" },
    });
    const confirm = await html(`/console/sessions/default/${sid}/jobs/long/confirm/cancel`);
    expect(confirm).toContain("Cancel job");
    const answer = await postForm(
      `/console/sessions/default/${sid}/jobs/long/actions/cancel`,
      { form_token: formTokenOf(confirm) },
      { cookie: COOKIE },
    );
    expect(answer.status).toBe(303);
    const beat = await call("POST", `/v1/sessions/${sid}/exec-jobs/long/heartbeat`, {
      token: reserved.body.callback.token,
    });
    expect(beat.body.cancel_requested).toBe(true);
    const page = await html(`/console/sessions/default/${sid}`);
    expect(page).toContain("cancel requested");
    // Cancel applies to a job only: the session has no such action.
    expect((await getPage(`/console/sessions/default/${sid}/confirm/cancel`, COOKIE)).status).toBe(
      404,
    );
  });
});

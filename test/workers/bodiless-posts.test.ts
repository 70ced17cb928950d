// The POSTs that take no body (cancel, redeliver, expire-wait, mark-lost, the operator's cancel)
// refuse one with unknown fields as every other route does (422, nothing changed), and take no
// body or `{}` as before.
import { describe, expect, it } from "vitest";
import * as api from "../support/api";
import { OPERATOR_TOKEN } from "../support/secrets";

const ops = (method: string, path: string, body?: unknown) =>
  api.call(method, `/v1/ops/sessions/default/${path}`, {
    token: OPERATOR_TOKEN,
    ...(body === undefined ? {} : { body }),
  });

describe("a POST that takes no body", () => {
  it("answers 422 invalid_request for unknown fields on each of the five, and nothing changes", async () => {
    const sid = api.uniqueId("bodiless");
    await api.suspendedOn(sid, ["h1"]);
    const before = await api.view(sid);
    const stray = { force: true };
    const answers = [
      await api.call("POST", `/v1/sessions/${sid}/exec-jobs/h1/cancel`, { body: stray }),
      await ops("POST", `${sid}/exec-jobs/h1/cancel`, stray),
      await ops("POST", `${sid}/exec-jobs/h1/mark-lost`, stray),
      await ops("POST", `${sid}/expire-wait`, stray),
      await ops("POST", `${sid}/redeliver`, stray),
    ];
    expect(answers.map((answer) => [answer.status, answer.body.code])).toEqual(
      Array(5).fill([422, "invalid_request"]),
    );
    expect(answers[0]?.body.errors).toEqual([
      expect.objectContaining({ message: expect.stringContaining("force") }),
    ]);
    expect(await api.view(sid)).toEqual(before);
    const job = await api.call("GET", `/v1/sessions/${sid}/exec-jobs/h1`);
    expect(job.body).toMatchObject({ status: "running", cancel_requested: false });
  });

  it("takes no body and an empty object as before", async () => {
    const sid = api.uniqueId("bodiless-ok");
    await api.suspendedOn(sid, ["h1", "h2"]);
    expect((await api.call("POST", `/v1/sessions/${sid}/exec-jobs/h1/cancel`)).status).toBe(202);
    const empty = await api.call("POST", `/v1/sessions/${sid}/exec-jobs/h1/cancel`, { body: {} });
    expect(empty.status).toBe(202);
    expect((await ops("POST", `${sid}/exec-jobs/h2/cancel`, {})).status).toBe(202);
    expect((await ops("POST", `${sid}/exec-jobs/h2/mark-lost`)).status).toBe(200);
    expect((await ops("POST", `${sid}/expire-wait`, {})).status).toBe(200);
  });
});

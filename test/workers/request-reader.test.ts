import { describe, expect, it } from "vitest";
import * as api from "../support/api";

describe("a refused part of the request is named as the part it is", () => {
  it("an unknown query key is refused as the query's, not the body's", async () => {
    const sid = api.uniqueId("reader-query");
    await api.createSession(sid);
    const answer = await api.call("GET", `/v1/sessions/${sid}/messages?zzz=1`);
    expect([answer.status, answer.body.code]).toEqual([422, "invalid_request"]);
    expect(answer.body.detail).toBe('(query): Unrecognized key: "zzz"');
    expect(answer.body.errors).toEqual([{ path: "(query)", message: 'Unrecognized key: "zzz"' }]);
  });

  it("an unknown body key is still refused as the body's", async () => {
    const sid = api.uniqueId("reader-body");
    await api.createSession(sid);
    const answer = await api.call("POST", `/v1/sessions/${sid}/inbox/claim`, { body: { zzz: 1 } });
    expect([answer.status, answer.body.code]).toEqual([422, "invalid_request"]);
    expect(answer.body.detail).toBe('(body): Unrecognized key: "zzz"');
  });
});

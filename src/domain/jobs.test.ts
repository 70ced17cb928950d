import { describe, expect, it } from "vitest";
import { at, completed, ok, session, suspendedOn, T0, withJobs } from "../../test/support/domain";
import { MAX_BACKLOG } from "./inbox";
import { completeJob, reserveJob } from "./jobs";

const complete = (
  state: ReturnType<typeof session>,
  handle: string,
  output = "out",
  lifetime = state.lifetime,
) =>
  completeJob(
    state,
    {
      lifetime,
      handle,
      tokenSeq: null,
      result: completed(0, output),
      observed: false,
      resumeId: "rs",
    },
    at(T0),
  );

describe("job rules", () => {
  it("the same handle and command is one reservation; another command is a job_conflict", () => {
    const once = withJobs(session(), ["a"]);
    const again = ok(
      reserveJob(once, { handle: "a", command: "run a", callbackToken: "tok-a" }, T0 + 5),
    );
    expect(again.value.created).toBe(false);
    expect(again.state).toBe(once);
    expect(
      reserveJob(once, { handle: "a", command: "other", callbackToken: "tok-a" }, T0),
    ).toMatchObject({
      ok: false,
      code: "job_conflict",
    });
  });

  it("a duplicate result changes nothing and a different one is a result_conflict", () => {
    const first = ok(complete(suspendedOn(["a"]), "a", "x")).state;
    const duplicate = ok(complete(first, "a", "x"));
    expect(duplicate.value).toEqual({ outcome: "duplicate", generation: 1 });
    expect(duplicate.state).toBe(first);
    expect(complete(first, "a", "y")).toMatchObject({ ok: false, code: "result_conflict" });
  });

  it("a result for another lifetime is refused as lifetime_ended", () => {
    expect(complete(suspendedOn(["a"]), "a", "x", "lt-old")).toMatchObject({
      ok: false,
      code: "lifetime_ended",
    });
    expect(
      completeJob(
        null,
        {
          lifetime: "lt-1",
          handle: "a",
          tokenSeq: null,
          result: completed(0, ""),
          observed: false,
          resumeId: "r",
        },
        at(T0),
      ),
    ).toMatchObject({
      ok: false,
      code: "lifetime_ended",
    });
  });

  it("a full inbox refuses the completion with inbox_full and keeps the job running", () => {
    const handles = Array.from({ length: MAX_BACKLOG + 1 }, (_, i) => `h${i}`);
    let state = withJobs(session(), handles);
    for (const handle of handles.slice(0, MAX_BACKLOG)) state = ok(complete(state, handle)).state;
    const refused = complete(state, handles[MAX_BACKLOG]!);
    expect(refused).toMatchObject({ ok: false, code: "inbox_full" });
    expect(state.jobs[handles[MAX_BACKLOG]!]?.result).toBeNull();
  });

  it("a purged job is refused however long after its purge: the token's seq outlives the tombstone", () => {
    const state = withJobs(session(), ["a"]);
    const seq = state.jobs.a?.seq ?? 0;
    expect(seq).toBe(1);
    // The job and, later, even its tombstone are gone: nothing of it is left in storage.
    const forgotten = { ...state, jobs: {}, purged: {} };
    const late = completeJob(
      forgotten,
      {
        lifetime: state.lifetime,
        handle: "a",
        tokenSeq: seq,
        result: completed(0, "late"),
        observed: false,
        resumeId: "r",
      },
      at(T0),
    );
    expect(late).toMatchObject({ ok: false, code: "job_expired" });
  });

  it("a handle reserved again after its tombstone went cannot be completed with the old token", () => {
    const first = withJobs(session(), ["a"]);
    const again = ok(
      reserveJob(
        { ...first, jobs: {}, purged: {} },
        { handle: "a", command: "run a", callbackToken: "tok-new" },
        T0,
      ),
    ).state;
    expect(again.jobs.a?.seq).toBe(2);
    const stale = (tokenSeq: number) =>
      completeJob(
        again,
        {
          lifetime: again.lifetime,
          handle: "a",
          tokenSeq,
          result: completed(0, "x"),
          observed: false,
          resumeId: "r",
        },
        at(T0),
      );
    expect(stale(1)).toMatchObject({ ok: false, code: "job_expired" });
    expect(ok(stale(2)).value).toMatchObject({ outcome: "accepted" });
    // A seq never handed out is not a purged job: nothing is known of it.
    expect(stale(9)).toMatchObject({ ok: false, code: "not_found" });
  });
});

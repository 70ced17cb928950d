import { describe, expect, it } from "vitest";
import { at, CONFIG, completed, ok, session, suspendedOn, T0 } from "../../test/support/domain";
import { recordDelivery } from "./delivery";
import { attentionAt, indexEntryOf, sameEntry, sendableAt, WAKE_SETTLE_MS } from "./index-entry";
import { completeJob } from "./jobs";
import { registerRun } from "./session";
import { type Resume, resumeFields, type Session } from "./state";

const complete = (state: Session, handle: string, now = T0 + 1_000) =>
  ok(
    completeJob(
      state,
      {
        lifetime: state.lifetime,
        handle,
        tokenSeq: null,
        result: completed(0, "out"),
        observed: false,
        resumeId: "rs-1",
      },
      at(now),
    ),
  ).state;

const withResume = (state: Session, change: (resume: Resume) => Resume): Session => {
  const base = state.resume;
  if (base === null) throw new Error("expected a resume");
  return { ...state, resume: change(base) };
};

describe("index entries", () => {
  it("a suspended session is listed as suspended since its wait, overdue from its ceiling", () => {
    const suspended = suspendedOn(["a", "b"]);
    const entry = indexEntryOf(suspended, 0, CONFIG);
    expect(entry).toEqual({
      tenant: "default",
      id: "s1",
      attention: "suspended",
      since: T0,
      overdueAt: T0 + CONFIG.waitCeilingMs,
      detail: {
        session_status: "suspended",
        ceiling_at: T0 + CONFIG.waitCeilingMs,
        waiting_for: ["a", "b"],
        resume: null,
        inbox_pending: 0,
      },
    });
    expect(attentionAt(entry, T0 + CONFIG.waitCeilingMs - 1)).toBe("suspended");
    expect(attentionAt(entry, T0 + CONFIG.waitCeilingMs)).toBe("overdue");
  });

  it("a scheduled resume is resuming and never overdue; once delivered, the claim timeout makes it overdue", () => {
    const resuming = complete(suspendedOn(["a"]), "a");
    const scheduled = indexEntryOf(resuming, 1, CONFIG);
    expect(scheduled).toMatchObject({
      attention: "resuming",
      since: T0 + 1_000,
      overdueAt: null,
      detail: {
        session_status: "resuming",
        waiting_for: [],
        resume: { resume_id: "rs-1", state: "scheduled", attempts: 0, last_error: null },
        inbox_pending: 1,
      },
    });
    expect(attentionAt(scheduled, T0 + 10 * CONFIG.resumeClaimTimeoutMs)).toBe("resuming");

    const delivered = ok(
      recordDelivery(
        withResume(resuming, (resume) => ({ ...resume, attempts: 1 })),
        { resumeId: "rs-1", delivered: true, error: null, random: 0 },
        at(T0 + 2_000),
      ),
    ).state;
    const entry = indexEntryOf(delivered, 1, CONFIG);
    expect(entry).toMatchObject({
      attention: "resuming",
      overdueAt: T0 + 2_000 + CONFIG.resumeClaimTimeoutMs,
      detail: { resume: { state: "delivered", attempts: 1 } },
    });
    expect(attentionAt(entry, T0 + 2_000 + CONFIG.resumeClaimTimeoutMs)).toBe("overdue");
  });

  it("a resume with no target is listed as no_target, and a failed one as failed since it ended", () => {
    const resuming = complete(suspendedOn(["a"]), "a");
    const waiting = withResume(resuming, (resume) => ({
      ...resumeFields(resume),
      state: "no_target",
      deliveredAt: null,
    }));
    expect(indexEntryOf(waiting, 1, CONFIG)).toMatchObject({
      attention: "no_target",
      since: T0 + 1_000,
      overdueAt: null,
    });
    const failed = withResume(resuming, (resume) => ({
      ...resumeFields(resume),
      state: "failed",
      attempts: 3,
      lastError: "HTTP 503",
      deliveredAt: null,
      endedAt: T0 + 9_000,
    }));
    expect(indexEntryOf(failed, 1, CONFIG)).toMatchObject({
      attention: "failed",
      since: T0 + 9_000,
      overdueAt: null,
      detail: {
        session_status: "idle",
        resume: { state: "failed", attempts: 3, last_error: "HTTP 503" },
      },
    });
  });

  it("idle and running sessions need no attention and carry nothing but their name", () => {
    const quiet = { tenant: "default", id: "s1", attention: null, since: null, overdueAt: null };
    expect(indexEntryOf(session(), 0, CONFIG)).toEqual({ ...quiet, detail: null });
    const running = ok(registerRun(session(), { runId: "run-1", resumeId: null }, T0)).state;
    expect(indexEntryOf(running, 5, CONFIG)).toEqual({ ...quiet, detail: null });
    expect(attentionAt(indexEntryOf(running, 5, CONFIG), T0)).toBeNull();
  });

  it("entries compare by content, so an unchanged session sends nothing", () => {
    const suspended = suspendedOn(["a"]);
    expect(sameEntry(indexEntryOf(suspended, 0, CONFIG), indexEntryOf(suspended, 0, CONFIG))).toBe(
      true,
    );
    expect(sameEntry(indexEntryOf(suspended, 0, CONFIG), indexEntryOf(suspended, 1, CONFIG))).toBe(
      false,
    );
    expect(sameEntry(null, indexEntryOf(suspended, 0, CONFIG))).toBe(false);
  });
});

describe("when an entry may be sent", () => {
  const SETTLE = WAKE_SETTLE_MS;
  const suspended = suspendedOn(["a"]);
  const woken = complete(suspended, "a", T0 + 1_000);
  const listedSuspended = indexEntryOf(suspended, 0, CONFIG);

  it("a wake's entry waits until its resume is a settle window old, then goes out", () => {
    const entry = indexEntryOf(woken, 1, CONFIG);
    expect(entry.attention).toBe("resuming");
    expect(sendableAt(entry, listedSuspended, SETTLE)).toBe(T0 + 1_000 + SETTLE);
    // Also when the object has sent nothing yet in its life (a quiet session woken from idle).
    expect(sendableAt(entry, null, SETTLE)).toBe(T0 + 1_000 + SETTLE);
  });

  it("a resume already listed as resuming, and every status but resuming, goes out at once", () => {
    const scheduled = indexEntryOf(woken, 1, CONFIG);
    const delivered = indexEntryOf(
      ok(
        recordDelivery(
          withResume(woken, (resume) => ({ ...resume, attempts: 1 })),
          { resumeId: "rs-1", delivered: true, error: null, random: 0 },
          at(T0 + 2_000),
        ),
      ).state,
      1,
      CONFIG,
    );
    expect(sendableAt(delivered, scheduled, SETTLE)).toBeNull();
    const failed = indexEntryOf(
      withResume(woken, (resume) => ({
        ...resumeFields(resume),
        state: "failed",
        attempts: 1,
        lastError: "HTTP 503",
        deliveredAt: null,
        endedAt: T0 + 1_500,
      })),
      1,
      CONFIG,
    );
    const nowhere = indexEntryOf(
      withResume(woken, (resume) => ({
        ...resumeFields(resume),
        state: "no_target",
        deliveredAt: null,
      })),
      1,
      CONFIG,
    );
    const quiet = indexEntryOf(
      ok(registerRun(woken, { runId: "run-1", resumeId: "rs-1" }, T0 + 1_200)).state,
      0,
      CONFIG,
    );
    for (const entry of [failed, nowhere, quiet, listedSuspended]) {
      expect([entry.attention, sendableAt(entry, listedSuspended, SETTLE)]).toEqual([
        entry.attention,
        null,
      ]);
    }
  });
});

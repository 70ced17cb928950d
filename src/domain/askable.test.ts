import { describe, expect, it } from "vitest";
import { askableOf } from "./askable";

const started = { runnerId: "1001", runnerSeq: 2, superseded: false };

describe("which runner may be asked about a job", () => {
  it("only the runner that started it, while its id still names the job", () => {
    expect(askableOf(started, { seq: 2 })).toEqual({ runnerId: "1001", unasked: null });
  });

  it("never a runner for a job the endpoint did not start, for a session without one, for a replaced one, or for an id given to a newer command", () => {
    expect(askableOf(null, { seq: 2 }).unasked).toBe("not_started_here");
    expect(askableOf(started, null).unasked).toBe("no_runner");
    expect(askableOf(started, { seq: 3 }).unasked).toBe("replaced");
    expect(askableOf({ ...started, superseded: true }, { seq: 2 }).unasked).toBe("superseded");
  });
});

import { describe, expect, it } from "vitest";
import {
  jobPrefix,
  lifetimePrefix,
  missingParts,
  partKey,
  partSlices,
  rangeAsk,
  rangeStands,
} from "./full-output";

const output = {
  bytes: 25,
  sha256: "f".repeat(64),
  parts: [
    { bytes: 10, sha256: "a".repeat(64) },
    { bytes: 10, sha256: "b".repeat(64) },
    { bytes: 5, sha256: "c".repeat(64) },
  ],
};
const key = { tenant: "acme", sessionId: "s1", lifetime: "lt_1" };

describe("full outputs", () => {
  it("a job's parts lie under its lifetime's prefix, each keyed by index and hash", () => {
    const prefix = jobPrefix({ ...key, handle: "h1", seq: 3 });
    expect(prefix).toBe("outputs/acme/s1/lt_1/h1/3/");
    expect(prefix.startsWith(lifetimePrefix(key))).toBe(true);
    expect(partKey(prefix, 7, "a".repeat(64))).toBe(`${prefix}0007.${"a".repeat(64)}`);
  });

  it("a part missing or of another size is named; stored parts as named are not", () => {
    const prefix = "p/";
    const stored = new Map([
      [partKey(prefix, 0, "a".repeat(64)), 10],
      [partKey(prefix, 1, "b".repeat(64)), 9],
      [partKey(prefix, 2, "d".repeat(64)), 5],
    ]);
    expect(missingParts(prefix, output, stored)).toEqual([
      { path: "full_output.parts.1", message: "part 1 has 9 bytes, not 10" },
      {
        path: "full_output.parts.2",
        message: `part 2 with sha256 ${"c".repeat(64)} is not uploaded`,
      },
    ]);
    stored.set(partKey(prefix, 1, "b".repeat(64)), 10);
    stored.set(partKey(prefix, 2, "c".repeat(64)), 5);
    expect(missingParts(prefix, output, stored)).toEqual([]);
  });

  it("a range is one of first-last, first- or the last n bytes; past the end it is unsatisfiable", () => {
    expect(rangeAsk(undefined, 25)).toEqual({ kind: "whole" });
    expect(rangeAsk("bytes=0-9", 25)).toEqual({ kind: "range", start: 0, end: 9 });
    expect(rangeAsk("bytes=20-", 25)).toEqual({ kind: "range", start: 20, end: 24 });
    expect(rangeAsk("bytes=20-99", 25)).toEqual({ kind: "range", start: 20, end: 24 });
    expect(rangeAsk("bytes=-5", 25)).toEqual({ kind: "range", start: 20, end: 24 });
    expect(rangeAsk("bytes=-99", 25)).toEqual({ kind: "range", start: 0, end: 24 });
    expect(rangeAsk("bytes=25-", 25)).toEqual({ kind: "unsatisfiable" });
    expect(rangeAsk("bytes=-0", 25)).toEqual({ kind: "unsatisfiable" });
  });

  it("a header the service cannot read is ignored: the whole output is sent", () => {
    for (const header of ["items=0-1", "bytes=0-1,5-6", "bytes=9-3", "bytes=-", "bytes=a-b"]) {
      expect(rangeAsk(header, 25), header).toEqual({ kind: "whole" });
    }
  });

  it("a range stands under no If-Range or the output's own strong ETag; a weak tag, a date or another tag make it the whole output", () => {
    const etag = `"${"a".repeat(64)}"`;
    expect([undefined, null, etag, ` ${etag} `].map((header) => rangeStands(header, etag))).toEqual(
      [true, true, true, true],
    );
    const others = [`W/${etag}`, "Tue, 01 Dec 2026 10:00:00 GMT", `"${"b".repeat(64)}"`, "", "*"];
    expect(others.map((header) => rangeStands(header, etag))).toEqual(others.map(() => false));
  });

  it("a range maps to the pieces of the parts it spans, in order", () => {
    expect(partSlices(output, 8, 21)).toEqual([
      { index: 0, offset: 8, length: 2 },
      { index: 1, offset: 0, length: 10 },
      { index: 2, offset: 0, length: 2 },
    ]);
    expect(partSlices(output, 10, 19)).toEqual([{ index: 1, offset: 0, length: 10 }]);
    expect(partSlices(output, 24, 24)).toEqual([{ index: 2, offset: 4, length: 1 }]);
  });
});

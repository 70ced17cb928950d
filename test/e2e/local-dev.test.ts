import { readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { useWranglerDev } from "../support/local-dev";

const NAME = `skipped-block-${process.pid}`;
const stateDirs = () =>
  readdirSync(tmpdir()).filter((entry) => entry.startsWith(`exec-inbox-${NAME}-`));

describe("a wrangler dev block whose tests a filter skips", () => {
  // Collected like every block, but none of its tests runs, so its hooks never do.
  describe.skip("skipped", () => {
    useWranglerDev(NAME);
    it("never runs", () => {});
  });

  it("leaves no state directory behind", () => {
    expect(stateDirs()).toEqual([]);
  });
});

import { describe, expect, it } from "vitest";
import { COMMAND_HEADER, COMMAND_PATH, commandRows } from "./command-table";
import { Tally } from "./lib/report";

const figures = (scale: number) => ({
  "start p50": 2 * scale,
  "complete p50": 3,
  "result p50": 1 * scale,
  "cycle p50": 6 * scale,
  "cycle p99": 9 * scale,
  "start cpu ms": 1.5 * scale,
  "complete cpu ms": 2,
  "result cpu ms": 0.5 * scale,
  "cycle cpu ms": 4 * scale,
  "cycle rate": 200 / scale,
});

describe("the command-path table", () => {
  it("has a row per path with a cell per column, then MCP's figures as ratios of REST's", () => {
    const t = new Tally();
    t.add(COMMAND_PATH.rest, figures(1));
    t.add(COMMAND_PATH.mcp, figures(2));
    const rows = commandRows(t);
    expect(rows.map((row) => row.length)).toEqual([
      COMMAND_HEADER.length,
      COMMAND_HEADER.length,
      COMMAND_HEADER.length,
    ]);
    expect(rows[0]).toEqual([
      COMMAND_PATH.rest,
      "2.00",
      "3.00",
      "1.00",
      "6.00",
      "9.00",
      "1.50",
      "2.00",
      "0.50",
      "4.00",
      "200",
    ]);
    expect(rows[2]).toEqual([
      "MCP / REST",
      "2.00×",
      "1.00×",
      "2.00×",
      "2.00×",
      "2.00×",
      "2.00×",
      "1.00×",
      "2.00×",
      "2.00×",
      "0.50×",
    ]);
  });

  it("shows a dash for a path that was not measured", () => {
    const t = new Tally();
    t.add(COMMAND_PATH.rest, figures(1));
    const [, mcp, ratios] = commandRows(t);
    expect(mcp?.slice(1).every((cell) => cell === "–")).toBe(true);
    expect(ratios?.slice(1).every((cell) => cell === "–")).toBe(true);
  });
});

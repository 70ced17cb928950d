// The budget table `npm run bench` writes into docs/benchmarks.md: what one wake costs (SQLite
// rows, CPU, memory per waiting session, USD per million at list prices) for exec-inbox beside the
// durable-wake floor and the peers, then its price item by item.
import { SYSTEM } from "./bench-tables";
import { say, type Tally, table } from "./lib/report";
import { formatSpread } from "./lib/stats";
import { type WakeUnits, wakeBill } from "./lib/wake-budget";

const COLUMNS = [
  SYSTEM.execDirect,
  SYSTEM.wakeFloor,
  SYSTEM.restate1,
  SYSTEM.restate2,
  SYSTEM.flowsDirect,
] as const;

/** Short headers: the systems' full names are in the tables below. */
const HEADER: Record<(typeof COLUMNS)[number], string> = {
  [SYSTEM.execDirect]: "exec-inbox (workerd direct)",
  [SYSTEM.wakeFloor]: "durable-wake floor (workerd direct)",
  [SYSTEM.restate1]: "Restate HTTP/1.1",
  [SYSTEM.restate2]: "Restate HTTP/2",
  [SYSTEM.flowsDirect]: "Workflows (workerd direct)",
};

/** A system's billed units per wake, from the medians of its runs; null where Cloudflare bills none. */
function unitsOf(t: Tally, system: (typeof COLUMNS)[number]): WakeUnits | null {
  const m = (metric: string) => t.get(system, metric).median;
  // CPU s per 1,000 wakes is CPU ms per wake.
  const cpuMs = m("cpu per 1000");
  // An object is billed while active: from the result's arrival to the delivery's answer.
  const object = {
    activeMs: m("wake p50"),
    doRequests: 1 + m("alarms"),
    sqliteRowsRead: m("rows_read"),
    sqliteRowsWritten: m("rows_written"),
  };
  switch (system) {
    case SYSTEM.execDirect:
      return { cpuMs, ...object, d1RowsWritten: m("index_rows_written") };
    case SYSTEM.wakeFloor:
      return { cpuMs, ...object };
    case SYSTEM.flowsDirect:
      // Workflows bill as Workers (the sendEvent request and CPU) plus storage, no rows.
      return { cpuMs };
    default:
      // Restate runs on the operator's machines: its cost is its CPU and memory.
      return null;
  }
}

const sum = (bill: Record<string, number>) => Object.values(bill).reduce((a, usd) => a + usd, 0);

export function printBudget(t: Tally): void {
  const cell = (system: string, metric: string, factor = 1) => {
    const figure = t.get(system, metric);
    return formatSpread({
      ...figure,
      median: figure.median * factor,
      min: figure.min * factor,
      max: figure.max * factor,
    });
  };
  const bills = COLUMNS.map((system) => {
    const units = unitsOf(t, system);
    return units === null ? null : wakeBill(units);
  });
  say("### Budget of one wake (a completion that wakes a waiting session)");
  table(
    ["per wake", ...COLUMNS.map((s) => HEADER[s])],
    [
      ["SQLite rows read", ...COLUMNS.map((s) => cell(s, "rows_read"))],
      ["SQLite rows written", ...COLUMNS.map((s) => cell(s, "rows_written"))],
      [
        "D1 rows written (the index, until the claim)",
        ...COLUMNS.map((s) => cell(s, "index_rows_written")),
      ],
      [
        "D1 rows written per whole cycle (with the next suspend)",
        ...COLUMNS.map((s) => cell(s, "index_rows_per_cycle")),
      ],
      ["alarm invocations", ...COLUMNS.map((s) => cell(s, "alarms"))],
      ["serving processes' CPU ms", ...COLUMNS.map((s) => cell(s, "cpu per 1000"))],
      // MiB per 1,000 sessions, as KiB per session.
      ["RSS KiB per waiting session", ...COLUMNS.map((s) => cell(s, "rss per 1000", 1.024))],
      [
        "**USD per million wakes**",
        ...bills.map((bill) => (bill === null ? "– (self-hosted)" : `**${sum(bill).toFixed(2)}**`)),
      ],
    ],
  );
  say(
    "Rows: the objects' own counters (`GET /v1/sessions/{sid}/stats`; the floor's `/stats`) around 10 wakes, read once the delivery's outcome committed; the index's D1 rows until it settled after the woken run's claim. CPU: every serving process (workerd with its local D1; Restate's server and service) over the concurrent phase, so an upper bound of the CPU Cloudflare bills. RSS: the serving processes' growth while the concurrent phase's sessions were made to wait, per session.",
  );
  const priced = COLUMNS.flatMap((system, i) => {
    const bill = bills[i];
    return bill === undefined || bill === null ? [] : [{ system, bill }];
  });
  const items = [...new Set(priced.flatMap(({ bill }) => Object.keys(bill)))];
  table(
    [
      "USD per million wakes, at list prices (bench/lib/prices.ts)",
      ...priced.map((p) => HEADER[p.system]),
    ],
    [
      ...items.map((item) => [
        item,
        ...priced.map(({ bill }) =>
          bill[item] === undefined ? "–" : (bill[item] ?? 0).toFixed(3),
        ),
      ]),
      ["**total**", ...priced.map(({ bill }) => `**${sum(bill).toFixed(2)}**`)],
    ],
  );
  say(
    "Workers: one request (the result's POST) and the CPU above. Durable Objects: the completion's call and each alarm as requests; duration from the result's arrival to the delivery's answer (the sequential p50) at 128 MB. Workflows: billed as Workers, plus the GB-months its instances keep stored (not priced per wake here).",
  );
}

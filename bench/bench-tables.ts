// The tables `npm run bench` prints from the figures of its runs: latency, rates, cost and size,
// exec-inbox against its peers, and its budget per wake (bench/budget-table.ts).
import { say, type Tally, table } from "./lib/report";

export const SYSTEM = {
  floorDirect: "floor Worker · workerd direct",
  floorEntry: "floor Worker · Miniflare entry",
  wakeFloor: "durable-wake floor (one row + alarm, POST, outcome) · workerd direct",
  execDirect: "exec-inbox · workerd direct",
  execEntry: "exec-inbox · Miniflare entry",
  execNoIndex: "exec-inbox · workerd direct, index off",
  execDev: "exec-inbox · wrangler dev",
  restate1: "Restate · HTTP/1.1",
  restate2: "Restate · HTTP/2",
  flowsDirect: "Workflows · workerd direct",
  flowsEntry: "Workflows · Miniflare entry",
} as const;

const ALL = Object.values(SYSTEM);
const WAKERS = ALL.filter((name) => !name.startsWith("floor"));
const EXEC = SYSTEM.execDirect;

interface Plan {
  runs: number;
  sequential: number;
  warmup: number;
  concurrent: number;
  concurrency: number;
}

export function printTables(t: Tally, plan: Plan): void {
  say();
  say(
    `Each cell: the median of ${plan.runs} run${plan.runs === 1 ? "" : "s"}${plan.runs === 1 ? "" : ", with the lowest and highest run in brackets"}. Latencies: ${plan.sequential} sequential samples per run (each wake waits for the previous session to resume) after ${plan.warmup} warm-up wakes and 50 warm-up floor calls. Rates, CPU and memory: a separate phase of ${plan.concurrent} wakes (or floor calls) with ${plan.concurrency} in flight, after ${plan.concurrency * 2} warm-up wakes. "workerd direct" is the built Worker on its own workerd socket (Miniflare's \`unsafeDirectSockets\`); "Miniflare entry" goes through Miniflare's entry worker; wrangler dev adds its proxy process.`,
  );
  say("\n### Floors of the runtime (ms, and calls per second at concurrency 16)");
  table(
    [
      "runtime",
      "no-op route p50",
      "p99",
      "no-op object call p50",
      "p99",
      "object call committing one row p50",
      "p99",
      "no-op route /s",
      "no-op object /s",
      "one-row commits /s (16 objects)",
    ],
    ALL.filter((s) => t.get(s, "noop p50").runs > 0 || t.get(s, "object p50").runs > 0).map((s) => [
      s,
      t.cell(s, "noop p50"),
      t.cell(s, "noop p99"),
      t.cell(s, "object p50"),
      t.cell(s, "object p99"),
      t.cell(s, "write p50"),
      t.cell(s, "write p99"),
      t.cell(s, "noop rate"),
      t.cell(s, "object rate"),
      t.cell(s, "write rate"),
    ]),
  );
  say("### Wake latency, sequential (ms)");
  table(
    [
      "system",
      "send → accepted p50",
      "p99",
      "send → resumed p50",
      "p99",
      "resumed / its no-op route",
      "resumed / no-op object call",
      "resumed / one-row commit",
    ],
    WAKERS.map((s) => {
      const floorOf = s.includes("direct") ? SYSTEM.floorDirect : SYSTEM.floorEntry;
      const ownRuntime =
        s.startsWith("exec") || s.startsWith("Workflows") || s === SYSTEM.wakeFloor;
      return [
        s,
        t.cell(s, "accept p50"),
        t.cell(s, "accept p99"),
        t.cell(s, "wake p50"),
        t.cell(s, "wake p99"),
        t.ratio([s, "wake p50"], [s, "noop p50"]),
        ownRuntime ? t.ratio([s, "wake p50"], [floorOf, "object p50"]) : "–",
        ownRuntime ? t.ratio([s, "wake p50"], [floorOf, "write p50"]) : "–",
      ];
    }),
  );
  say(`### Rates at concurrency ${plan.concurrency} (per second)`);
  table(
    ["system", "results accepted /s", "sessions resumed /s (first send → last resume)"],
    WAKERS.map((s) => [s, t.cell(s, "accept rate"), t.cell(s, "wake rate")]),
  );
  say("### Cost and size, from /proc (concurrent phase)");
  table(
    [
      "system",
      "serving processes' CPU s per 1,000 wakes",
      "per 1,000 no-op routes",
      "load generator's CPU s per 1,000 wakes",
      "RSS MiB per 1,000 sessions waiting",
    ],
    WAKERS.map((s) => [
      s,
      t.cell(s, "cpu per 1000"),
      t.cell(s, "noop cpu per 1000"),
      t.cell(s, "client cpu per 1000"),
      t.cell(s, "rss per 1000"),
    ]),
  );
  say("### exec-inbox (workerd direct) against the peers: ratios of medians");
  const vs = (peer: string) => [
    peer,
    t.ratio([EXEC, "wake p50"], [peer, "wake p50"]),
    t.ratio([EXEC, "accept p50"], [peer, "accept p50"]),
    t.ratio([EXEC, "accept rate"], [peer, "accept rate"]),
    t.ratio([EXEC, "wake rate"], [peer, "wake rate"]),
    t.ratio([EXEC, "cpu per 1000"], [peer, "cpu per 1000"]),
  ];
  table(
    ["peer", "resumed p50", "accepted p50", "accepted /s", "resumed /s", "CPU per wake"],
    [
      vs(SYSTEM.restate1),
      vs(SYSTEM.restate2),
      vs(SYSTEM.flowsDirect),
      vs(SYSTEM.flowsEntry),
      // What exec-inbox's wake costs above the least any durable wake pays on its runtime.
      vs(SYSTEM.wakeFloor),
    ],
  );
  printAims(t);
  printRestateErrors(t);
}

/**
 * The targets of a wake near the runtime's floor, each a ratio inside this one run: exec-inbox
 * (workerd direct, index on) against the durable-wake floor and the peers on the same machine.
 */
function printAims(t: Tally): void {
  const m = (system: string, metric: string) => t.get(system, metric).median;
  // [target, figure, the system it is held against, the bound on exec-inbox ÷ that system]
  const aims: Array<[string, string, string, { atMost: number } | { atLeast: number }]> = [
    ["serving CPU per wake", "cpu per 1000", SYSTEM.wakeFloor, { atMost: 2 }],
    ["send → resumed p50", "wake p50", SYSTEM.wakeFloor, { atMost: 1.5 }],
    ["sessions resumed /s at concurrency 16", "wake rate", SYSTEM.restate2, { atLeast: 1 }],
    ["RSS per waiting session", "rss per 1000", SYSTEM.flowsDirect, { atMost: 1 }],
  ];
  say("### Targets (exec-inbox · workerd direct, index on)");
  table(
    ["target", "exec-inbox", "held against", "its figure", "ratio", "bound", "met"],
    aims.map(([aim, metric, against, bound]) => {
      const ratio = m(EXEC, metric) / m(against, metric);
      const met = "atMost" in bound ? ratio <= bound.atMost : ratio >= bound.atLeast;
      return [
        aim,
        m(EXEC, metric).toFixed(2),
        against,
        m(against, metric).toFixed(2),
        `${ratio.toFixed(2)}×`,
        "atMost" in bound ? `≤ ${bound.atMost}×` : `≥ ${bound.atLeast}×`,
        met ? "yes" : "**no**",
      ];
    }),
  );
}

/** Restate retries an invocation whose handler logged an error: a run with many measured retries. */
function printRestateErrors(t: Tally): void {
  const errors = [SYSTEM.restate1, SYSTEM.restate2].map(
    (s) => `${s}: ${t.get(s, "handler errors").median}`,
  );
  say(`Restate SDK errors logged (Restate retries those invocations): ${errors.join(", ")}.`);
}

// The table of a background command's cost by each door, REST and MCP (bench/bench-commands.ts):
// latency of each step and of the whole, the serving processes' CPU per step, and MCP's ratio to
// REST, both measured against the same workerd process in the same run.
import { say, type Tally, table } from "./lib/report";

export const COMMAND_PATH = {
  rest: "REST: reserve → completion → pull the job",
  mcp: "MCP: exec_command (task) → completion → tasks/result",
} as const;

export const COMMAND_HEADER = [
  "path (exec-inbox · workerd direct)",
  "start p50 (reserve · exec_command)",
  "completion → 202 p50",
  "result p50 (pull · tasks/result)",
  "start → result p50",
  "p99",
  "serving CPU ms: start",
  "completion",
  "result",
  "whole command",
  "commands /s at 16",
] as const;

const METRICS = [
  "start p50",
  "complete p50",
  "result p50",
  "cycle p50",
  "cycle p99",
  "start cpu ms",
  "complete cpu ms",
  "result cpu ms",
  "cycle cpu ms",
  "cycle rate",
] as const;

/** One row per path, then MCP's figures as ratios of REST's (medians over the runs). */
export function commandRows(t: Tally): string[][] {
  const rows = Object.values(COMMAND_PATH).map((path) => [
    path,
    ...METRICS.map((metric) => t.cell(path, metric)),
  ]);
  const ratios = [
    "MCP / REST",
    ...METRICS.map((metric) => t.ratio([COMMAND_PATH.mcp, metric], [COMMAND_PATH.rest, metric])),
  ];
  return [...rows, ratios];
}

export function printCommands(t: Tally, plan: { sequential: number; concurrent: number }): void {
  say("### A background command, start to result: REST and MCP (ms, CPU ms per command)");
  table(COMMAND_HEADER, commandRows(t));
  say(
    `Both paths against one workerd process (exec-inbox · workerd direct), their runner a stand-in in the bench's process that answers at once: the figures are the service's. Latency: ${plan.sequential} commands per path, one at a time, the paths taking turns. CPU and rate: ${plan.concurrent} commands per path with 16 in flight, every start, then every completion, then every result, each batch's CPU read until the processes settled. MCP's start is the tools/call that calls the runner's exec_command, reserves the job, arms the runner's callback and stores the task; REST's is the reservation alone (its agent host calls the runner itself).`,
  );
}

// How the console words times and statuses for a person at a glance ("3 min ago", "in 2 h").
// Pure: the caller passes `now`; the page's script repeats the same wording in the browser.
import { assertNever } from "../domain/assert-never";
import type { AttentionStatus } from "../domain/attention-status";
import type { JobStatus } from "../domain/schemas";
import type { ResumeState, SessionStatus } from "../domain/state";

const UNITS: readonly [limitMs: number, sizeMs: number, name: string][] = [
  [60_000, 1000, "s"],
  [3_600_000, 60_000, "min"],
  [86_400_000, 3_600_000, "h"],
  [Number.POSITIVE_INFINITY, 86_400_000, "d"],
];

/** "just now", "42 s ago", "3 min ago", "in 2 h": whole units, rounded down, never "0 min". */
export function relativeTime(atMs: number, nowMs: number): string {
  const delta = atMs - nowMs;
  const distance = Math.abs(delta);
  if (distance < 1000) return "just now";
  const [, size, name] = UNITS.find(([limit]) => distance < limit) ?? ["", 86_400_000, "d"];
  const amount = `${Math.floor(distance / size)} ${name}`;
  return delta < 0 ? `${amount} ago` : `in ${amount}`;
}

/** A relative time for an ISO timestamp, or a dash when there is none. */
export function relativeIso(iso: string | null | undefined, nowMs: number): string {
  if (iso === null || iso === undefined) return "—";
  const at = Date.parse(iso);
  return Number.isNaN(at) ? iso : relativeTime(at, nowMs);
}

/** Every status a badge shows: a session's, its attention, its resume's, a job's. */
export type BadgeStatus = SessionStatus | AttentionStatus | ResumeState | JobStatus;

/** Status → colour family of its badge: red needs a hand, amber waits, blue moves, green rests. */
export function statusTone(status: BadgeStatus): "red" | "amber" | "blue" | "green" {
  switch (status) {
    case "failed":
    case "no_target":
    case "overdue":
    case "lost":
    case "killed":
      return "red";
    case "suspended":
    case "running":
    case "scheduled":
      return "amber";
    case "resuming":
    case "delivered":
      return "blue";
    case "completed":
    case "idle":
      return "green";
    default:
      return assertNever(status);
  }
}

/** A deadline in words: "in 5 h" while ahead, "overdue by 3 min" once passed. */
export function deadline(iso: string | null | undefined, nowMs: number): string {
  if (iso === null || iso === undefined) return "—";
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return iso;
  return at <= nowMs
    ? `overdue by ${relativeTime(nowMs, at).replace(/^in /, "")}`
    : relativeTime(at, nowMs);
}

/** The script the pages carry: the same wording, recomputed every second in the browser. */
export const RELATIVE_TIME_SOURCE = `function relativeTime(at, now) {
  var delta = at - now, distance = Math.abs(delta);
  if (distance < 1000) return "just now";
  var units = [[60000, 1000, "s"], [3600000, 60000, "min"], [86400000, 3600000, "h"], [Infinity, 86400000, "d"]];
  var unit = units.find(function (u) { return distance < u[0]; });
  var amount = Math.floor(distance / unit[1]) + " " + unit[2];
  return delta < 0 ? amount + " ago" : "in " + amount;
}`;

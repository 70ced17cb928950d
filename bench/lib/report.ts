// The benchmark's output: every line printed as it is made and kept for the generated markdown file.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { formatSpread, type Spread, spread } from "./stats";

const lines: string[] = [];

export function say(line = ""): void {
  console.log(line);
  lines.push(line);
}

export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): void {
  say();
  say(`| ${header.join(" | ")} |`);
  say(`| ${header.map(() => "---").join(" | ")} |`);
  for (const row of rows) say(`| ${row.join(" | ")} |`);
  say();
}

/** Where the output stands now: `saidSince` it gives what was printed after this point. */
export function mark(): number {
  return lines.length;
}

export function saidSince(from: number): string[] {
  return lines.slice(from);
}

export function writeReport(path: string, title: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `# ${title}\n\n${lines.join("\n")}\n`);
}

/** Figures of every run, by system and metric. */
export class Tally {
  private readonly values = new Map<string, number[]>();

  add(system: string, figures: Record<string, number>): void {
    for (const [metric, value] of Object.entries(figures)) {
      const key = `${system}\u0000${metric}`;
      this.values.set(key, [...(this.values.get(key) ?? []), value]);
    }
  }

  get(system: string, metric: string): Spread {
    return spread(this.values.get(`${system}\u0000${metric}`) ?? []);
  }

  /** The formatted median (spread) of a metric, or "–" when the system has none. */
  cell(system: string, metric: string, unit = ""): string {
    return formatSpread(this.get(system, metric), unit);
  }

  /** median(a) / median(b) as "0.53×". */
  ratio(a: [string, string], b: [string, string]): string {
    const value = this.get(...a).median / this.get(...b).median;
    return Number.isFinite(value) ? `${value.toFixed(2)}×` : "–";
  }
}

// Percentiles of samples and the median and spread of a figure over runs: the benchmark's arithmetic.

/** The p-th percentile (nearest rank) of `samples`; NaN for none. Never given one sample twice. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  return (
    sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN
  );
}

/** One figure measured in every run: its median and the lowest and highest run. */
export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly runs: number;
}

export function spread(values: readonly number[]): Spread {
  const finite = values.filter(Number.isFinite);
  return {
    median: percentile(finite, 50),
    min: Math.min(...finite),
    max: Math.max(...finite),
    runs: finite.length,
  };
}

const digits = (value: number) => (value >= 100 ? 0 : value >= 10 ? 1 : 2);

/** "4.21 (3.90–4.60)" for three runs, "4.21" for one. */
export function formatSpread(figure: Spread, unit = ""): string {
  if (figure.runs === 0) return "–";
  const d = digits(figure.median);
  const middle = `${figure.median.toFixed(d)}${unit}`;
  return figure.runs === 1
    ? middle
    : `${middle} (${figure.min.toFixed(d)}–${figure.max.toFixed(d)})`;
}

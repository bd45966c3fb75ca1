/** A ratio measured in several A/B rounds: its median and the range it moved in. */
export interface RatioSummary {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly rounds: number;
}

/** Median of the per-round ratios (mean of the middle two for an even count), with min and max as the spread. */
export function summarizeRatios(ratios: readonly number[]): RatioSummary {
  if (ratios.length === 0) throw new RangeError("no ratios to summarize");
  if (ratios.some((ratio) => !Number.isFinite(ratio))) throw new RangeError(`ratios must be finite, got [${ratios.join(", ")}]`);
  const sorted = [...ratios].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  return { median, min: sorted[0]!, max: sorted[sorted.length - 1]!, rounds: sorted.length };
}

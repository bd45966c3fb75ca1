/** Client-side latency statistics of a set of requests, in perf_analyzer's definitions. */
export interface LatencySummary {
  readonly count: number;
  readonly avgNs: number;
  /** Sample standard deviation (n − 1), in µs; 0 for fewer than two requests. */
  readonly stdUs: number;
  /** p50, p90, p95, p99, and the extra `--percentile` when one was asked for. */
  readonly percentilesNs: ReadonlyMap<number, number>;
}

/** The percentiles every report carries. */
export const REPORTED_PERCENTILES: readonly number[] = [50, 90, 95, 99];

/**
 * perf_analyzer's percentile: the element at index round(p/100 × (n − 1)) of the ascending latencies, an
 * observed value (no interpolation). `sortedNs` must be sorted and non-empty.
 */
export function percentileOfSorted(sortedNs: ArrayLike<number>, percentile: number): number {
  if (sortedNs.length === 0) throw new RangeError("no latencies to take a percentile of");
  if (!(percentile >= 0 && percentile <= 100)) throw new RangeError(`percentile ${percentile} is not in [0, 100]`);
  const index = Math.floor((percentile / 100) * (sortedNs.length - 1) + 0.5);
  return sortedNs[index]!;
}

/** Average, standard deviation and percentiles of request latencies (any order; not modified). */
export function summarizeLatencies(latenciesNs: readonly number[], extraPercentile?: number): LatencySummary {
  if (latenciesNs.length === 0) throw new RangeError("no latencies to summarize");
  const sorted = Float64Array.from(latenciesNs).sort();
  const count = sorted.length;
  let sum = 0;
  for (const value of sorted) sum += value;
  const avgNs = sum / count;
  let squares = 0;
  for (const value of sorted) squares += (value - avgNs) ** 2;
  const stdUs = count > 1 ? Math.sqrt(squares / (count - 1)) / 1000 : 0;
  const percentiles = new Set([...REPORTED_PERCENTILES, ...(extraPercentile === undefined ? [] : [extraPercentile])]);
  const percentilesNs = new Map([...percentiles].sort((a, b) => a - b).map((p) => [p, percentileOfSorted(sorted, p)]));
  return { count, avgNs, stdUs, percentilesNs };
}

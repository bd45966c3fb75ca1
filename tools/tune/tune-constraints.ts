/** What a measured point must satisfy to be picked (Model Analyzer's `--latency-budget` and `--min-throughput`). */
export interface TuneConstraints {
  /** Largest allowed p99 latency. */
  readonly latencyBudgetMs: number | undefined;
  /** Smallest allowed throughput, in inferences per second. */
  readonly minThroughput: number | undefined;
}

/** The two numbers constraints, the Pareto front and the pick look at. */
export interface ThroughputLatency {
  /** Inferences per second. */
  readonly throughput: number;
  readonly p99Ms: number;
}

export function satisfiesConstraints(point: ThroughputLatency, constraints: TuneConstraints): boolean {
  return constraintMiss(point, constraints) === 0;
}

/**
 * How far a point misses the constraints, relative to each (0.5: p99 50% over the budget, or throughput half short of
 * the minimum), the worst of them; 0 when it meets them, Infinity when it served nothing.
 */
export function constraintMiss(point: ThroughputLatency, constraints: TuneConstraints): number {
  if (point.throughput <= 0) return Infinity;
  const latency = constraints.latencyBudgetMs === undefined ? 0 : point.p99Ms / constraints.latencyBudgetMs - 1;
  const throughput = constraints.minThroughput === undefined ? 0 : 1 - point.throughput / constraints.minThroughput;
  return Math.max(0, latency, throughput);
}

/** The constraints in words, e.g. `p99 <= 50 ms, >= 100 infer/s`, or `none`. */
export function describeConstraints(constraints: TuneConstraints): string {
  const parts: string[] = [];
  if (constraints.latencyBudgetMs !== undefined) parts.push(`p99 <= ${constraints.latencyBudgetMs} ms`);
  if (constraints.minThroughput !== undefined) parts.push(`>= ${constraints.minThroughput} infer/s`);
  return parts.length === 0 ? "none" : parts.join(", ");
}

/**
 * The points no other point beats on both throughput (higher) and p99 latency (lower): the trade-offs worth
 * choosing between. Returned by ascending throughput; points equal on both numbers are all kept.
 */
export function paretoFront<T extends ThroughputLatency>(points: readonly T[]): T[] {
  const dominated = (point: T): boolean => points.some((other) =>
    other.throughput >= point.throughput && other.p99Ms <= point.p99Ms && (other.throughput > point.throughput || other.p99Ms < point.p99Ms));
  return points.filter((point) => point.throughput > 0 && !dominated(point)).sort((a, b) => a.throughput - b.throughput);
}

/**
 * Model Analyzer's pick: the highest throughput among the points that satisfy the constraints; between points
 * within `tieTolerance` (relative) of that throughput, the lower p99 wins. Undefined when no point satisfies them.
 */
export function pickBest<T extends ThroughputLatency>(points: readonly T[], constraints: TuneConstraints, tieTolerance = 0.01): T | undefined {
  const allowed = points.filter((point) => satisfiesConstraints(point, constraints));
  if (allowed.length === 0) return undefined;
  const top = Math.max(...allowed.map((point) => point.throughput));
  return allowed.filter((point) => point.throughput >= top * (1 - tieTolerance)).reduce((best, point) => (point.p99Ms < best.p99Ms ? point : best));
}

/** What stability looks at in one measurement window. */
export interface WindowStabilityMetrics {
  readonly throughput: number;
  /** Average latency, or the `--percentile` latency when one was given; undefined for an empty window. */
  readonly stabilizingLatencyNs: number | undefined;
}

export interface StabilityCriteria {
  /** `-s`: largest allowed spread, max/min − 1, in percent (default 10). */
  readonly stabilityPercentage: number;
  /** How many trailing windows must agree (perf_analyzer: 3). */
  readonly windowCount: number;
}

function withinSpread(values: readonly number[], stabilityPercentage: number): boolean {
  return Math.max(...values) / Math.min(...values) <= 1 + stabilityPercentage / 100;
}

/**
 * perf_analyzer's stability rule: the last `windowCount` windows all completed requests, and both their
 * throughputs and their stabilizing latencies have max/min within 1 + stabilityPercentage/100.
 */
export function isStable(windows: readonly WindowStabilityMetrics[], criteria: StabilityCriteria): boolean {
  if (windows.length < criteria.windowCount) return false;
  const last = windows.slice(-criteria.windowCount);
  const latencies = last.map((window) => window.stabilizingLatencyNs);
  if (last.some((window) => window.throughput === 0) || latencies.some((latency) => latency === undefined)) return false;
  return withinSpread(last.map((window) => window.throughput), criteria.stabilityPercentage)
    && withinSpread(latencies as number[], criteria.stabilityPercentage);
}

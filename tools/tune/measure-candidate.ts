import { LoadGenerator, type PerfMeasurement, profileLoadLevel, type RequestSender, serverBreakdown, type ServerBreakdown, serverStatsDelta, type StatisticsReader } from "../perf/index";
import type { ThroughputLatency } from "./tune-constraints";

/** How candidates are measured: perf_analyzer's stability loop with windows sized to the candidate. */
export interface MeasurementSettings {
  /** Shortest measurement window, and the length of the warm-up. */
  readonly measurementIntervalMs: number;
  /** Longest window a slow candidate gets. */
  readonly maxWindowMs: number;
  /** `-s`: the last 3 windows agree within this many percent on throughput and average latency. */
  readonly stabilityPercentage: number;
  /** `-r`: most windows per candidate and load level. */
  readonly maxTrials: number;
}

/** One candidate at one load level, as the CSV, the chart and the pick see it. */
export interface MeasuredPoint extends ThroughputLatency {
  readonly concurrency: number;
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly avgLatencyMs: number;
  /** Per-request server times from the statistics extension, in µs. */
  readonly server: ServerBreakdown;
  /** Inferences per execution: how well the dynamic batcher filled its batches. */
  readonly avgBatchSize: number;
  readonly stable: boolean;
  readonly windows: number;
  readonly windowMs: number;
}

/**
 * A batching server finishes a whole batch at once, so a window counts whole executions: with k of them in a
 * window the count moves by 1/k from window to window, and the stability rule (10% by default) needs about ten.
 * The window is therefore long enough for `executionsPerWindow` executions at the warm-up's rate, within
 * [minMs, maxMs].
 */
export function windowForExecutionRate(executionsPerSecond: number, minMs: number, maxMs: number, executionsPerWindow = 12): number {
  if (!(executionsPerSecond > 0)) return maxMs;
  return Math.round(Math.min(maxMs, Math.max(minMs, (executionsPerWindow / executionsPerSecond) * 1000)));
}

function pointOf(concurrency: number, measurement: PerfMeasurement, stable: boolean, windows: number, windowMs: number): MeasuredPoint {
  const ms = (p: number): number => (measurement.latency?.percentilesNs.get(p) ?? 0) / 1e6;
  const server = measurement.server;
  return {
    concurrency,
    throughput: measurement.throughput,
    p50Ms: ms(50),
    p90Ms: ms(90),
    p99Ms: ms(99),
    avgLatencyMs: (measurement.latency?.avgNs ?? 0) / 1e6,
    server: serverBreakdown(server),
    avgBatchSize: server.executionCount === 0 ? 0 : server.inferenceCount / server.executionCount,
    stable,
    windows,
    windowMs,
  };
}

/**
 * Measures one candidate at one concurrency: a warm-up window (thrown away; its execution rate sizes the windows),
 * then perf_analyzer's loop of windows until the last three are stable or `maxTrials` ran. Rejects with the first
 * failed request.
 */
export async function measureAtConcurrency(
  send: RequestSender, readStatistics: StatisticsReader, concurrency: number, settings: MeasurementSettings,
  onWindow?: (trial: number, window: PerfMeasurement, windowMs: number) => void,
): Promise<MeasuredPoint> {
  const generator = new LoadGenerator(send, { kind: "concurrency", concurrency });
  generator.start();
  try {
    const before = await readStatistics();
    const warmUp = await generator.measureWindow(settings.measurementIntervalMs);
    const executions = serverStatsDelta(before, await readStatistics()).executionCount;
    const windowMs = windowForExecutionRate(executions / ((warmUp.endNs - warmUp.startNs) / 1e9), settings.measurementIntervalMs, settings.maxWindowMs);
    const result = await profileLoadLevel(generator, readStatistics, {
      measurementIntervalMs: windowMs,
      stability: { stabilityPercentage: settings.stabilityPercentage, windowCount: 3 },
      maxTrials: settings.maxTrials,
      batchSize: 1,
      percentile: undefined,
    }, (trial, window) => onWindow?.(trial, window, windowMs));
    return pointOf(concurrency, result.measurement, result.stable, result.trials, windowMs);
  } finally {
    await generator.stop();
  }
}

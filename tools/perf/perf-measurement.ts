import { type LatencySummary, summarizeLatencies } from "./latency-summary";
import type { WindowRecords } from "./load-generator";
import type { ServerSideStats } from "./server-side-stats";

/** One measurement: one window, or the merged last windows of a load level. */
export interface PerfMeasurement {
  readonly requestCount: number;
  readonly durationNs: number;
  /** Inferences per second: completed requests × batch size ÷ duration. */
  readonly throughput: number;
  /** Undefined when no request completed. */
  readonly latency: LatencySummary | undefined;
  /** What stability compares: the `--percentile` latency, or the average. */
  readonly stabilizingLatencyNs: number | undefined;
  /** Client time encoding a request, per request (perf_analyzer's "Client Send"). */
  readonly avgSendUs: number;
  /** Client time reading and decoding a response, per request ("Client Recv"). */
  readonly avgReceiveUs: number;
  /** Requests started per second (open loop: compare with the asked-for rate). */
  readonly sendRate: number;
  readonly delayedCount: number;
  readonly server: ServerSideStats;
}

/**
 * Summarizes consecutive windows as one measurement, the way perf_analyzer merges its last stable windows:
 * durations and counts add up, latencies are pooled before taking percentiles.
 */
export function summarizeMeasurement(
  windows: readonly WindowRecords[], server: ServerSideStats, batchSize: number, percentile?: number,
): PerfMeasurement {
  const latencies = windows.flatMap((window) => window.latenciesNs);
  const durationNs = windows.reduce((total, window) => total + (window.endNs - window.startNs), 0);
  const requestCount = latencies.length;
  const latency = requestCount === 0 ? undefined : summarizeLatencies(latencies, percentile);
  const perRequestUs = (totalNs: number): number => (requestCount === 0 ? 0 : totalNs / requestCount / 1000);
  const seconds = durationNs / 1e9;
  return {
    requestCount,
    durationNs,
    throughput: seconds === 0 ? 0 : (requestCount * batchSize) / seconds,
    latency,
    stabilizingLatencyNs: latency === undefined ? undefined : percentile === undefined ? latency.avgNs : latency.percentilesNs.get(percentile),
    avgSendUs: perRequestUs(windows.reduce((total, window) => total + window.sendNsTotal, 0)),
    avgReceiveUs: perRequestUs(windows.reduce((total, window) => total + window.receiveNsTotal, 0)),
    sendRate: seconds === 0 ? 0 : windows.reduce((total, window) => total + window.sentCount, 0) / seconds,
    delayedCount: windows.reduce((total, window) => total + window.delayedCount, 0),
    server,
  };
}

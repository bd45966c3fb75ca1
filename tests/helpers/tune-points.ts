import type { MeasuredPoint } from "../../tools/tune/measure-candidate";
import type { TunedSettings } from "../../tools/tune/tuned-settings";

/** A CPU configuration with dynamic batching, for candidates of inference-tune's unit tests. */
export const TUNE_SETTINGS: TunedSettings = {
  device: { kind: "KIND_CPU" }, instanceCount: 1, intraOpThreads: 2, maxBatchSize: 8, dynamicBatching: { maxQueueDelayUs: 100, preferredBatchSizes: [4] },
};

/** A stable measured point at `concurrency`, its other percentiles derived from p99. */
export function measuredPoint(concurrency: number, throughput: number, p99Ms: number): MeasuredPoint {
  return {
    concurrency, throughput, p99Ms, p50Ms: p99Ms / 2, p90Ms: p99Ms * 0.9, avgLatencyMs: p99Ms / 2,
    server: { requestUs: 900, overheadUs: 100, queueUs: 300, computeInputUs: 10, computeInferUs: 480, computeOutputUs: 10 },
    avgBatchSize: 3.5, stable: true, windows: 3, windowMs: 1000,
  };
}

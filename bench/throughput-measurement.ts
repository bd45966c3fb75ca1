import { LoadGenerator, type RequestSender } from "../server/perf/load-generator";
import { summarizeMeasurement } from "../server/perf/perf-measurement";
import { EMPTY_SERVER_STATS } from "../server/perf/server-side-stats";
import type { SideMeasurement } from "./ab-comparison";

export interface FixedLoad {
  readonly concurrency: number;
  readonly warmupMs: number;
  readonly durationMs: number;
}

/**
 * Throughput and latency of `send` at a fixed concurrency: the load runs through a warm-up window that is thrown
 * away, then one measured window (the A/B rounds, not a stability loop, are what make bench numbers hold).
 */
export async function measureThroughput(send: RequestSender, load: FixedLoad): Promise<SideMeasurement> {
  const generator = new LoadGenerator(send, { kind: "concurrency", concurrency: load.concurrency });
  generator.start();
  try {
    await generator.measureWindow(load.warmupMs);
    const records = await generator.measureWindow(load.durationMs);
    const measurement = summarizeMeasurement([records], EMPTY_SERVER_STATS, 1);
    const ms = (p: number): number => (measurement.latency?.percentilesNs.get(p) ?? 0) / 1e6;
    return { throughput: measurement.throughput, p50Ms: ms(50), p90Ms: ms(90), p99Ms: ms(99) };
  } finally {
    await generator.stop();
  }
}

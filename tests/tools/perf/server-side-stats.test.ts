import { describe, expect, it } from "vitest";
import type { ModelStatistics } from "../../../client/index";
import { mergeServerStats, serverBreakdown, serverStatsDelta } from "../../../tools/perf/server-side-stats";

function snapshot(version: string, requests: number, scale: number): ModelStatistics {
  const stat = (nsPerRequest: number) => ({ count: requests, ns: requests * nsPerRequest * scale });
  return {
    name: "m", version, last_inference: 0, inference_count: requests * 2, execution_count: requests,
    inference_stats: {
      success: stat(1000), fail: stat(0), queue: stat(100), compute_input: stat(50), compute_infer: stat(600), compute_output: stat(50),
      cache_hit: stat(0), cache_miss: stat(0),
    },
    batch_stats: [],
  };
}

describe("serverStatsDelta", () => {
  it("subtracts the snapshot before a window from the one after, summing versions", () => {
    const delta = serverStatsDelta(
      [snapshot("1", 10, 1), snapshot("2", 0, 1)],
      [snapshot("1", 30, 1), snapshot("2", 5, 1)],
    );
    expect(delta.success).toEqual({ count: 25, ns: 25_000 });
    expect(delta.queue).toEqual({ count: 25, ns: 2_500 });
    expect(delta.inferenceCount).toBe(50);
    expect(delta.executionCount).toBe(25);
  });

  it("counts a version that appeared during the window from zero", () => {
    expect(serverStatsDelta([], [snapshot("3", 4, 1)]).computeInfer).toEqual({ count: 4, ns: 2_400 });
  });
});

describe("serverBreakdown", () => {
  it("divides every duration by the successful requests and calls the rest overhead, in µs", () => {
    const stats = serverStatsDelta([], [snapshot("1", 10, 1000)]);
    expect(serverBreakdown(stats)).toEqual({ requestUs: 1000, overheadUs: 200, queueUs: 100, computeInputUs: 50, computeInferUs: 600, computeOutputUs: 50 });
  });

  it("clamps overhead at zero and is all zero without requests", () => {
    const stats = serverStatsDelta([], [snapshot("1", 1, 1)]);
    expect(serverBreakdown({ ...stats, success: { count: 1, ns: 10 } }).overheadUs).toBe(0);
    expect(serverBreakdown(serverStatsDelta([], [])).requestUs).toBe(0);
  });

  it("merges consecutive windows by adding them", () => {
    const one = serverStatsDelta([], [snapshot("1", 2, 1)]);
    expect(mergeServerStats(one, one).success).toEqual({ count: 4, ns: 4000 });
  });
});

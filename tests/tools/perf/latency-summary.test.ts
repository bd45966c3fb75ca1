import { describe, expect, it } from "vitest";
import { percentileOfSorted, summarizeLatencies } from "../../../tools/perf/latency-summary";

describe("percentileOfSorted", () => {
  it("picks the observed value at round(p/100 x (n-1)), perf_analyzer's index", () => {
    const sorted = Array.from({ length: 10 }, (_, i) => (i + 1) * 100);
    // index = floor(p/100 * 9 + 0.5): p50 -> 5, p90 -> 8, p95 -> 9, p99 -> 9
    expect(percentileOfSorted(sorted, 50)).toBe(600);
    expect(percentileOfSorted(sorted, 90)).toBe(900);
    expect(percentileOfSorted(sorted, 95)).toBe(1000);
    expect(percentileOfSorted(sorted, 99)).toBe(1000);
    expect(percentileOfSorted(sorted, 0)).toBe(100);
    expect(percentileOfSorted([42], 99)).toBe(42);
  });

  it("refuses an empty set and percentiles outside [0, 100]", () => {
    expect(() => percentileOfSorted([], 50)).toThrow(/no latencies/);
    expect(() => percentileOfSorted([1], 101)).toThrow(/not in \[0, 100\]/);
  });
});

describe("summarizeLatencies", () => {
  it("sorts a copy and reports average, sample standard deviation in µs and the four percentiles", () => {
    const latencies = [4000, 1000, 3000, 2000];
    const summary = summarizeLatencies(latencies);
    expect(latencies).toEqual([4000, 1000, 3000, 2000]);
    expect(summary.count).toBe(4);
    expect(summary.avgNs).toBe(2500);
    // sample variance of 1000..4000 step 1000 = 1666666.67 ns², std = 1290.99 ns = 1.29 µs
    expect(summary.stdUs).toBeCloseTo(1.29099, 4);
    expect([...summary.percentilesNs]).toEqual([[50, 3000], [90, 4000], [95, 4000], [99, 4000]]);
  });

  it("adds the --percentile one in order", () => {
    const summary = summarizeLatencies(Array.from({ length: 101 }, (_, i) => i), 75);
    expect([...summary.percentilesNs.keys()]).toEqual([50, 75, 90, 95, 99]);
    expect(summary.percentilesNs.get(75)).toBe(75);
  });

  it("gives a standard deviation of 0 for a single request", () => {
    expect(summarizeLatencies([7]).stdUs).toBe(0);
  });
});

import { describe, expect, it } from "vitest";
import { medianThroughput, runAbComparison, type SideMeasurement } from "../../tools/perf/ab-comparison";
import { formatBenchTable } from "../../bench/bench-table";
import { summarizeRatios } from "../../tools/perf/ratio-summary";

const measured = (throughput: number): SideMeasurement => ({ throughput, p50Ms: 1, p90Ms: 2, p99Ms: 3 });

describe("summarizeRatios", () => {
  it("takes the median and the min-max spread", () => {
    expect(summarizeRatios([0.9, 0.7, 1.1])).toEqual({ median: 0.9, min: 0.7, max: 1.1, rounds: 3 });
    expect(summarizeRatios([1, 4, 2, 3]).median).toBe(2.5);
  });

  it("refuses no ratios and non-finite ones", () => {
    expect(() => summarizeRatios([])).toThrow(/no ratios/);
    expect(() => summarizeRatios([1, Number.NaN])).toThrow(/must be finite/);
  });
});

describe("runAbComparison", () => {
  it("measures both sides every round, in alternating order, and reports per-round ratios", async () => {
    const calls: string[] = [];
    const aThroughputs = [90, 80, 100];
    const side = (label: string, throughputs: number[]) => ({
      label,
      measure: async () => {
        calls.push(label);
        return measured(throughputs.shift()!);
      },
    });
    const result = await runAbComparison("m", "concurrency 4", side("A", aThroughputs), side("B", [100, 100, 100]), 3);
    expect(calls).toEqual(["A", "B", "B", "A", "A", "B"]);
    expect(result.rounds.map((round) => round.ratio)).toEqual([0.9, 0.8, 1]);
    expect(result.ratio).toEqual({ median: 0.9, min: 0.8, max: 1, rounds: 3 });
    expect(medianThroughput(result, "a")).toBe(90);

    const table = formatBenchTable([result]).split("\n");
    expect(table[0]).toMatch(/^comparison\s+held equal\s+A infer\/s\s+B infer\/s\s+ratio A\/B \(median\)\s+spread \(min-max\)\s+rounds$/);
    expect(table[2]).toMatch(/^m: A \/ B\s+concurrency 4\s+90\.0\s+100\.0\s+0\.90\s+0\.80-1\.00\s+3$/);
  });

  it("fails clearly when the baseline completes nothing", async () => {
    await expect(runAbComparison("m", "", { label: "A", measure: async () => measured(1) }, { label: "B", measure: async () => measured(0) }, 3))
      .rejects.toThrow("m: B completed no request in its measurement window");
  });
});

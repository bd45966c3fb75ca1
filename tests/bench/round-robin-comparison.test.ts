import { describe, expect, it } from "vitest";
import { roundRobinRatio, runRoundRobin } from "../../bench/round-robin-comparison";
import type { SideMeasurement } from "../../tools/perf/ab-comparison";

const measured = (throughput: number): SideMeasurement => ({ throughput, p50Ms: 1, p90Ms: 2, p99Ms: 3 });

describe("runRoundRobin", () => {
  it("measures every side once a round, starting one side later each round, and pairs any two sides' rounds", async () => {
    const calls: string[] = [];
    const throughputs: Record<string, number[]> = { a: [100, 90, 80], b: [50, 60, 40], c: [10, 10, 10] };
    const sides = Object.keys(throughputs).map((label) => ({
      label,
      measure: async () => {
        calls.push(label);
        return measured(throughputs[label]!.shift()!);
      },
    }));
    const rounds = await runRoundRobin(sides, 3);
    expect(calls).toEqual(["a", "b", "c", "b", "c", "a", "c", "a", "b"]);
    const aOverB = roundRobinRatio("case", "held", rounds, "a", "b");
    expect(aOverB.rounds.map((round) => round.ratio)).toEqual([2, 1.5, 2]);
    expect(aOverB.ratio).toEqual({ median: 2, min: 1.5, max: 2, rounds: 3 });
    expect(() => roundRobinRatio("case", "held", rounds, "a", "d")).toThrow(/no side 'd'/);
  });
});

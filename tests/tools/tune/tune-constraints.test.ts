import { describe, expect, it } from "vitest";
import type { ComparisonResult } from "../../../tools/perf/ab-comparison";
import { summarizeRatios } from "../../../tools/perf/ratio-summary";
import { confirmPick } from "../../../tools/tune/confirm-pick";
import { constraintMiss, describeConstraints, paretoFront, pickBest, satisfiesConstraints } from "../../../tools/tune/tune-constraints";

const point = (id: string, throughput: number, p99Ms: number) => ({ id, throughput, p99Ms });
const NONE = { latencyBudgetMs: undefined, minThroughput: undefined };

describe("constraints", () => {
  it("filters by latency budget and minimum throughput, and never passes a point that served nothing", () => {
    const constraints = { latencyBudgetMs: 50, minThroughput: 100 };
    expect(satisfiesConstraints(point("a", 120, 50), constraints)).toBe(true);
    expect(satisfiesConstraints(point("b", 120, 50.1), constraints)).toBe(false);
    expect(satisfiesConstraints(point("c", 99, 10), constraints)).toBe(false);
    expect(satisfiesConstraints(point("d", 0, 0), NONE)).toBe(false);
    expect(constraintMiss(point("e", 120, 75), constraints)).toBeCloseTo(0.5);
    expect(constraintMiss(point("f", 25, 10), constraints)).toBeCloseTo(0.75);
    expect(constraintMiss(point("g", 0, 0), constraints)).toBe(Infinity);
    expect(describeConstraints(constraints)).toBe("p99 <= 50 ms, >= 100 infer/s");
    expect(describeConstraints(NONE)).toBe("none");
  });
});

describe("paretoFront", () => {
  it("keeps the points nothing beats on both throughput and p99, by throughput", () => {
    const points = [point("slow", 10, 5), point("dominated", 15, 30), point("mid", 20, 20), point("fast", 40, 90), point("twin", 40, 90), point("worse", 39, 95)];
    expect(paretoFront(points).map((p) => p.id)).toEqual(["slow", "mid", "fast", "twin"]);
    expect(paretoFront([point("failed", 0, 0)])).toEqual([]);
  });
});

describe("pickBest", () => {
  const points = [point("a", 100, 40), point("b", 150, 80), point("c", 149, 60), point("d", 200, 300)];
  it("takes the highest throughput, and within 1% of it the lower p99", () => {
    expect(pickBest(points, NONE)?.id).toBe("d");
    expect(pickBest(points, { latencyBudgetMs: 100, minThroughput: undefined })?.id).toBe("c");
    expect(pickBest(points, { latencyBudgetMs: 50, minThroughput: undefined })?.id).toBe("a");
    expect(pickBest(points, { latencyBudgetMs: 10, minThroughput: undefined })).toBeUndefined();
  });
});

function comparison(rounds: [tuned: number, start: number, tunedP99: number, startP99: number][]): ComparisonResult {
  const side = (throughput: number, p99Ms: number) => ({ throughput, p50Ms: p99Ms / 2, p90Ms: p99Ms, p99Ms });
  const measured = rounds.map(([a, b, pa, pb]) => ({ a: side(a, pa), b: side(b, pb), ratio: a / b }));
  return { name: "m", a: "tuned", b: "start", setting: "concurrency 8", rounds: measured, ratio: summarizeRatios(measured.map((r) => r.ratio)) };
}

describe("confirmPick", () => {
  it("confirms a pick that beats the start side by side", () => {
    const confirmation = confirmPick(comparison([[120, 100, 10, 12], [110, 100, 10, 12], [130, 100, 11, 12]]), NONE);
    expect(confirmation).toMatchObject({ confirmed: true, tuned: { throughput: 120, p99Ms: 10 }, start: { throughput: 100, p99Ms: 12 } });
    expect(confirmation.reason).toBe("throughput ratio pick/start 1.20 (1.10-1.30) over 3 rounds");
    // Three rounds agreeing is still a one-in-four chance: the noise line says so.
    expect(confirmation.noise).toMatch(/all 3 rounds on one side of 1, but 25% likely by chance alone: too few rounds to tell \(use --ab-rounds 5 or more\)$/);
  });

  it("rejects a pick that does not beat the start, or that misses the budget when re-measured", () => {
    expect(confirmPick(comparison([[99, 100, 10, 10], [101, 100, 10, 10], [98, 100, 10, 10]]), NONE).confirmed).toBe(false);
    const missed = confirmPick(comparison([[150, 100, 60, 10], [150, 100, 60, 10], [150, 100, 60, 10]]), { latencyBudgetMs: 50, minThroughput: undefined });
    expect(missed.confirmed).toBe(false);
    expect(missed.reason).toMatch(/missed the constraints/);
  });

  it("confirms a slower pick when only it meets the latency budget", () => {
    const onlyPick = confirmPick(comparison([[80, 100, 40, 90], [82, 100, 41, 95], [79, 100, 39, 99]]), { latencyBudgetMs: 50, minThroughput: undefined });
    expect(onlyPick).toMatchObject({ confirmed: true });
    expect(onlyPick.reason).toMatch(/^only the pick meets the constraints/);
  });
});

describe("confirmPick's verdict on noisy rounds", () => {
  it("keeps the starting configuration when the ratios cross 1, and reports the noise it saw", () => {
    // The rounds: pick/start 3.11, 2.33, 0.55 at the same concurrency.
    const noisy = confirmPick(comparison([[3110, 1000, 10, 10], [2330, 1000, 10, 10], [550, 1000, 10, 10]]), NONE);
    expect(noisy).toMatchObject({ confirmed: false, verdict: "no-measurable-difference" });
    expect(noisy.reason).toBe("no measurable difference: throughput ratio pick/start 2.33 (0.55-3.11) over 3 rounds crosses 1, so the starting configuration stays");
    expect(noisy.noise).toMatch(/^round-to-round noise: pick ±\d+\.\d%, start ±0\.0% \(coefficient of variation of throughput\), ratio range 0\.55-3\.11; the 3 rounds fell on both sides of 1$/);
  });
});

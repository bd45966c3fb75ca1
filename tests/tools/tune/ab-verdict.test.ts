import { describe, expect, it } from "vitest";
import { summarizeRatios } from "../../../tools/perf/ratio-summary";
import { abVerdict, roundToRoundNoisePercent } from "../../../tools/tune/ab-verdict";
import { exitCodeOf } from "../../../tools/tune/tune-summary";

describe("abVerdict", () => {
  it("says no measurable difference when the ratios' range crosses 1, however far the median is from 1", () => {
    // The run: a median of 2.33 read as "2.3x faster" from rounds of which one was slower.
    expect(abVerdict(summarizeRatios([3.11, 2.33, 0.55])).kind).toBe("no-measurable-difference");
    expect(abVerdict(summarizeRatios([1.4, 1.3, 1.0, 1.5, 1.2])).kind).toBe("no-measurable-difference");
  });

  it("names a faster side only when every round agrees", () => {
    expect(abVerdict(summarizeRatios([1.1, 1.2, 1.05, 1.3, 1.15])).kind).toBe("pick-faster");
    expect(abVerdict(summarizeRatios([0.9, 0.8, 0.95, 0.85, 0.7])).kind).toBe("start-faster");
  });

  it("says whether the rounds are enough for agreement to mean anything (sign test)", () => {
    expect(abVerdict(summarizeRatios([1.2, 1.3, 1.1]))).toEqual({ kind: "pick-faster", chanceAlone: 0.25, enoughRounds: false });
    expect(abVerdict(summarizeRatios([1.2, 1.3, 1.1, 1.2, 1.25]))).toEqual({ kind: "pick-faster", chanceAlone: 0.0625, enoughRounds: true });
  });
});

describe("roundToRoundNoisePercent", () => {
  it("is the coefficient of variation of one side's throughput over the rounds", () => {
    expect(roundToRoundNoisePercent([100, 100, 100])).toBe(0);
    expect(roundToRoundNoisePercent([90, 110])).toBeCloseTo(14.14, 2);
    expect(roundToRoundNoisePercent([100])).toBe(0);
  });
});

describe("exitCodeOf", () => {
  it("tells a tuned config.pbtxt (0) from one that keeps the starting configuration (2)", () => {
    expect(exitCodeOf("tuned")).toBe(0);
    expect(exitCodeOf("kept-start")).toBe(2);
  });
});

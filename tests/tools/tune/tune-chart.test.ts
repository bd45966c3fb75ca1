import { describe, expect, it } from "vitest";
import { type CandidateRecord, ratePoints } from "../../../tools/tune/candidate-results";
import { tuneChartSpec } from "../../../tools/tune/tune-chart";
import { measuredPoint, TUNE_SETTINGS } from "../../helpers/tune-points";

const SETTINGS = TUNE_SETTINGS;
const point = measuredPoint;

// c1 measures faster than the start in the search, so the search picks it.
const candidates: CandidateRecord[] = [
  { id: "start", settings: SETTINGS, points: [point(16, 100, 40)], failure: undefined },
  { id: "c1", settings: { ...SETTINGS, instanceCount: 2, intraOpThreads: 1 }, points: [point(4, 150, 20)], failure: undefined },
];
const { points } = ratePoints(candidates, { latencyBudgetMs: 50, minThroughput: undefined });

/** The labelled points of the chart: label and legend role. */
function labelled(outcome: "tuned" | "kept-start"): [string, string][] {
  const spec = tuneChartSpec(points, "t", 50, outcome) as { data: { values: { label: string; role: string }[] } };
  return spec.data.values.filter((value) => value.label !== "").map((value) => [value.label, value.role]);
}

describe("inference-tune chart", () => {
  it("labels the search's best point the pick when the verdict wrote it", () => {
    expect(labelled("tuned")).toEqual([["start", "starting config"], ["pick (c1)", "pick"]]);
  });

  it("labels it not confirmed, and the start kept, when the verdict kept the starting configuration", () => {
    expect(labelled("kept-start")).toEqual([["start (kept)", "starting config"], ["not confirmed (c1)", "not confirmed"]]);
  });
});

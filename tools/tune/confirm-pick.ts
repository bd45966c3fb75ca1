import { type ComparisonResult, medianThroughput } from "../perf/index";
import { summarizeRatios } from "../perf/index";
import { satisfiesConstraints, type ThroughputLatency, type TuneConstraints } from "./tune-constraints";

export interface PickConfirmation {
  readonly confirmed: boolean;
  /** Why, in one sentence. */
  readonly reason: string;
  /** Median throughput and median p99 of each side over the rounds. */
  readonly tuned: ThroughputLatency;
  readonly start: ThroughputLatency;
}

function medians(result: ComparisonResult, side: "a" | "b"): ThroughputLatency {
  return { throughput: medianThroughput(result, side), p99Ms: summarizeRatios(result.rounds.map((round) => round[side].p99Ms)).median };
}

/**
 * Whether the side-by-side re-measurement (A = the pick, B = the starting configuration, same load, alternated)
 * confirms the pick: it must still satisfy the constraints, and beat the start on throughput (median of the
 * per-round ratios above 1) unless the start misses the constraints, where meeting them is what counts.
 */
export function confirmPick(result: ComparisonResult, constraints: TuneConstraints): PickConfirmation {
  const tuned = medians(result, "a");
  const start = medians(result, "b");
  const ratio = `${result.ratio.median.toFixed(2)} (${result.ratio.min.toFixed(2)}-${result.ratio.max.toFixed(2)}) over ${result.ratio.rounds} rounds`;
  if (!satisfiesConstraints(tuned, constraints)) {
    return { confirmed: false, tuned, start, reason: `re-measured, the pick missed the constraints (${tuned.throughput.toFixed(1)} infer/s, p99 ${tuned.p99Ms.toFixed(2)} ms)` };
  }
  if (!satisfiesConstraints(start, constraints)) {
    return { confirmed: true, tuned, start, reason: `only the pick meets the constraints; throughput ratio pick/start ${ratio}` };
  }
  return result.ratio.median > 1
    ? { confirmed: true, tuned, start, reason: `throughput ratio pick/start ${ratio}` }
    : { confirmed: false, tuned, start, reason: `re-measured side by side, the pick did not beat the starting configuration: throughput ratio ${ratio}` };
}

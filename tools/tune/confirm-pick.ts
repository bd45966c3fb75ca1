import { type ComparisonResult, medianThroughput, summarizeRatios } from "../perf/index";
import { type AbVerdictKind, abVerdict, MEANINGFUL_AB_ROUNDS, roundToRoundNoisePercent } from "./ab-verdict";
import { satisfiesConstraints, type ThroughputLatency, type TuneConstraints } from "./tune-constraints";

export interface PickConfirmation {
  readonly confirmed: boolean;
  /** What the throughput ratios say, whatever the constraints made of it. */
  readonly verdict: AbVerdictKind;
  /** Why, in one sentence. */
  readonly reason: string;
  /** The noise the rounds showed, and whether they were enough to tell, in one sentence. */
  readonly noise: string;
  /** Median throughput and median p99 of each side over the rounds. */
  readonly tuned: ThroughputLatency;
  readonly start: ThroughputLatency;
}

function medians(result: ComparisonResult, side: "a" | "b"): ThroughputLatency {
  return { throughput: medianThroughput(result, side), p99Ms: summarizeRatios(result.rounds.map((round) => round[side].p99Ms)).median };
}

function describeNoise(result: ComparisonResult): string {
  const percent = (side: "a" | "b"): string => roundToRoundNoisePercent(result.rounds.map((round) => round[side].throughput)).toFixed(1);
  const { kind, chanceAlone, enoughRounds } = abVerdict(result.ratio);
  const n = result.ratio.rounds;
  const spread = `ratio range ${result.ratio.min.toFixed(2)}-${result.ratio.max.toFixed(2)}`;
  const chance = `${(chanceAlone * 100).toFixed(0)}% likely by chance alone`;
  const rounds = kind === "no-measurable-difference"
    ? `the ${n} rounds fell on both sides of 1`
    : enoughRounds ? `all ${n} rounds on one side of 1, ${chance}`
      : `all ${n} rounds on one side of 1, but ${chance}: too few rounds to tell (use --ab-rounds ${MEANINGFUL_AB_ROUNDS} or more)`;
  return `round-to-round noise: pick ±${percent("a")}%, start ±${percent("b")}% (coefficient of variation of throughput), ${spread}; ${rounds}`;
}

/**
 * Whether the side-by-side re-measurement (A = the pick, B = the starting configuration, same load, alternated)
 * confirms the pick: it must still satisfy the constraints, and beat the start on throughput in every round
 * ({@link abVerdict}: a ratio range that crosses 1 is no measurable difference) unless the start misses the
 * constraints, where meeting them is what counts.
 */
export function confirmPick(result: ComparisonResult, constraints: TuneConstraints): PickConfirmation {
  const tuned = medians(result, "a");
  const start = medians(result, "b");
  const verdict = abVerdict(result.ratio).kind;
  const noise = describeNoise(result);
  const ratio = `${result.ratio.median.toFixed(2)} (${result.ratio.min.toFixed(2)}-${result.ratio.max.toFixed(2)}) over ${result.ratio.rounds} rounds`;
  const outcome = { verdict, noise, tuned, start };
  if (!satisfiesConstraints(tuned, constraints)) {
    return { ...outcome, confirmed: false, reason: `re-measured, the pick missed the constraints (${tuned.throughput.toFixed(1)} infer/s, p99 ${tuned.p99Ms.toFixed(2)} ms)` };
  }
  if (!satisfiesConstraints(start, constraints)) {
    return { ...outcome, confirmed: true, reason: `only the pick meets the constraints; throughput ratio pick/start ${ratio}` };
  }
  switch (verdict) {
    case "pick-faster":
      return { ...outcome, confirmed: true, reason: `throughput ratio pick/start ${ratio}` };
    case "start-faster":
      return { ...outcome, confirmed: false, reason: `re-measured side by side, the pick was slower than the starting configuration in every round: throughput ratio ${ratio}` };
    case "no-measurable-difference":
      return { ...outcome, confirmed: false, reason: `no measurable difference: throughput ratio pick/start ${ratio} crosses 1, so the starting configuration stays` };
  }
}

import type { RatioSummary } from "../perf/index";

/** What alternating A/B rounds (A = the pick, B = the starting configuration) say about throughput. */
export type AbVerdictKind = "pick-faster" | "start-faster" | "no-measurable-difference";

/** Fewest rounds for which "every round on one side of 1" is unlikely by chance alone (sign test: 2^(1-n) ≤ 1/16). */
export const MEANINGFUL_AB_ROUNDS = 5;

export interface AbVerdict {
  readonly kind: AbVerdictKind;
  /** Chance that every round falls on the same side of 1 when the two are equally fast (two-sided sign test). */
  readonly chanceAlone: number;
  /** Whether the rounds are enough for that chance to be small ({@link MEANINGFUL_AB_ROUNDS}). */
  readonly enoughRounds: boolean;
}

/**
 * The verdict the per-round throughput ratios support: one side is faster only when every round agrees (the
 * ratio's whole range lies above or below 1); a range that crosses 1 is "no measurable difference", however far
 * its median is from 1.
 */
export function abVerdict(ratio: RatioSummary): AbVerdict {
  const kind: AbVerdictKind = ratio.min > 1 ? "pick-faster" : ratio.max < 1 ? "start-faster" : "no-measurable-difference";
  const chanceAlone = Math.min(1, 2 ** (1 - ratio.rounds));
  return { kind, chanceAlone, enoughRounds: ratio.rounds >= MEANINGFUL_AB_ROUNDS };
}

/** Round-to-round noise of one side's throughput: coefficient of variation (sample standard deviation / mean), in percent. */
export function roundToRoundNoisePercent(throughputs: readonly number[]): number {
  if (throughputs.length < 2) return 0;
  const mean = throughputs.reduce((sum, value) => sum + value, 0) / throughputs.length;
  if (mean === 0) return 0;
  const variance = throughputs.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (throughputs.length - 1);
  return (Math.sqrt(variance) / mean) * 100;
}

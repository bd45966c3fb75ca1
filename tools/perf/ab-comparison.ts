import { type RatioSummary, summarizeRatios } from "./ratio-summary";

/** One throughput measurement of one side of a comparison. */
export interface SideMeasurement {
  /** Inferences per second. */
  readonly throughput: number;
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly p99Ms: number;
}

export interface ComparisonSide {
  readonly label: string;
  readonly measure: () => Promise<SideMeasurement>;
}

export interface ComparisonResult {
  readonly name: string;
  readonly a: string;
  readonly b: string;
  /** What was held equal (concurrency, batch, format). */
  readonly setting: string;
  readonly rounds: readonly { readonly a: SideMeasurement; readonly b: SideMeasurement; readonly ratio: number }[];
  /** Throughput ratio A/B over the rounds. */
  readonly ratio: RatioSummary;
}

function median(values: readonly number[]): number {
  return summarizeRatios(values).median;
}

/** Median throughput of one side over the rounds. */
export function medianThroughput(result: ComparisonResult, side: "a" | "b"): number {
  return median(result.rounds.map((round) => round[side].throughput));
}

/**
 * Measures both sides once per round, `rounds` times, in the same run: machine noise that drifts over time hits
 * both sides of each round alike, so the per-round ratio A/B holds where absolute numbers do not. The order
 * alternates (A B, B A, A B, ...): whatever the first side of a round pays or the second side inherits (the
 * previous side's server still exiting, caches, the CPU's clock) falls on each side in half the rounds instead of
 * always on A. Sequential by design: the two sides never compete for the CPU.
 */
export async function runAbComparison(
  name: string, setting: string, a: ComparisonSide, b: ComparisonSide, rounds: number,
  onRound?: (round: number, measured: ComparisonResult["rounds"][number]) => void,
): Promise<ComparisonResult> {
  const measured: ComparisonResult["rounds"][number][] = [];
  for (let round = 1; round <= rounds; round++) {
    const aFirst = round % 2 === 1;
    const first = await (aFirst ? a : b).measure();
    const second = await (aFirst ? b : a).measure();
    const [resultA, resultB] = aFirst ? [first, second] : [second, first];
    if (resultB.throughput === 0) throw new Error(`${name}: ${b.label} completed no request in its measurement window`);
    const entry = { a: resultA, b: resultB, ratio: resultA.throughput / resultB.throughput };
    measured.push(entry);
    onRound?.(round, entry);
  }
  return { name, a: a.label, b: b.label, setting, rounds: measured, ratio: summarizeRatios(measured.map((round) => round.ratio)) };
}

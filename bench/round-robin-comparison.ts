import { type ComparisonResult, type ComparisonSide, type SideMeasurement, summarizeRatios } from "../tools/perf/index";

/** Each side's measurements, one per round, in round order. */
export type RoundRobinMeasurements = ReadonlyMap<string, readonly SideMeasurement[]>;

/**
 * Measures every side once per round, the order rotated by one each round (so no side always follows the same
 * one), `rounds` times: the many-sided form of `runAbComparison`, so that any two sides' ratios are per round,
 * side by side in time, and drift on a shared machine hits both alike.
 */
export async function runRoundRobin(
  sides: readonly ComparisonSide[], rounds: number, onSide?: (round: number, label: string, measured: SideMeasurement) => void,
): Promise<RoundRobinMeasurements> {
  const measured = new Map<string, SideMeasurement[]>(sides.map((side) => [side.label, []]));
  for (let round = 1; round <= rounds; round++) {
    for (let i = 0; i < sides.length; i++) {
      const side = sides[(i + round - 1) % sides.length]!;
      const result = await side.measure();
      measured.get(side.label)!.push(result);
      onSide?.(round, side.label, result);
    }
  }
  return measured;
}

/** The comparison of two sides of a round-robin run: per-round throughput ratios A/B. */
export function roundRobinRatio(name: string, setting: string, measured: RoundRobinMeasurements, a: string, b: string): ComparisonResult {
  const sideA = measured.get(a);
  const sideB = measured.get(b);
  if (sideA === undefined || sideB === undefined) throw new Error(`${name}: no side '${sideA === undefined ? a : b}' was measured`);
  const rounds = sideA.map((resultA, index) => {
    const resultB = sideB[index]!;
    if (resultB.throughput === 0) throw new Error(`${name}: ${b} completed no request in round ${index + 1}`);
    return { a: resultA, b: resultB, ratio: resultA.throughput / resultB.throughput };
  });
  return { name, a, b, setting, rounds, ratio: summarizeRatios(rounds.map((round) => round.ratio)) };
}

import { type ComparisonResult, formatTextTable, medianThroughput } from "../tools/perf/index";

/** Header and cells of the ratio table: one row per comparison. */
export function benchTableContent(results: readonly ComparisonResult[]): { header: string[]; rows: string[][] } {
  const header = ["comparison", "held equal", "A infer/s", "B infer/s", "ratio A/B (median)", "spread (min-max)", "rounds"];
  const rows = results.map((result) => [
    `${result.name}: ${result.a} / ${result.b}`,
    result.setting,
    medianThroughput(result, "a").toFixed(1),
    medianThroughput(result, "b").toFixed(1),
    result.ratio.median.toFixed(2),
    `${result.ratio.min.toFixed(2)}-${result.ratio.max.toFixed(2)}`,
    String(result.ratio.rounds),
  ]);
  return { header, rows };
}

/** The ratio table as aligned text; throughputs are medians over the rounds. */
export function formatBenchTable(results: readonly ComparisonResult[]): string {
  const { header, rows } = benchTableContent(results);
  return formatTextTable(header, rows);
}

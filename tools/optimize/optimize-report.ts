import os from "node:os";
import { formatTextTable, renderVegaLiteChart, writeChartReport } from "../perf/index";
import type { AccuracySummary } from "./accuracy";
import type { ServedSpeed } from "./served-speed";

/** One variant's row of the report. */
export interface VariantResult {
  readonly label: string;
  readonly directory: string;
  readonly accuracy: AccuracySummary | undefined;
  readonly speed: ServedSpeed | undefined;
}

const HEADER = [
  "variant", "top-1 agree", "top-5 agree", "max |diff|", "mean |diff|", "top-1 acc (FP32)",
  "best conc.", "infer/s", "p99 ms", "FP32 infer/s", "FP32 p99 ms", "x FP32 (median, min-max)",
];

const percent = (share: number): string => `${(share * 100).toFixed(1)}%`;

export function reportRows(results: readonly VariantResult[]): string[][] {
  return results.map(({ label, accuracy, speed }) => {
    const best = speed?.best;
    return [
      label,
      accuracy ? percent(accuracy.top1Agreement) : "-",
      accuracy ? percent(accuracy.top5Agreement) : "-",
      accuracy ? accuracy.maxAbsDiff.toExponential(2) : "-",
      accuracy ? accuracy.meanAbsDiff.toExponential(2) : "-",
      accuracy?.labelled ? `${percent(accuracy.labelled.variantTop1)} (${percent(accuracy.labelled.referenceTop1)}) of ${accuracy.labelled.samples}` : "-",
      best ? String(best.concurrency) : "-",
      best ? best.variant.throughput.toFixed(1) : "-",
      best ? best.variant.p99Ms.toFixed(1) : "-",
      best ? best.baseline.throughput.toFixed(1) : "-",
      best ? best.baseline.p99Ms.toFixed(1) : "-",
      best ? `${best.comparison.ratio.median.toFixed(2)} (${best.comparison.ratio.min.toFixed(2)}-${best.comparison.ratio.max.toFixed(2)})` : "-",
    ];
  });
}

export function reportTable(results: readonly VariantResult[]): string {
  return formatTextTable(HEADER, reportRows(results));
}

/** The HTML report: the table, and served throughput of each variant and of FP32 at each concurrency measured. */
export async function writeOptimizeReport(dir: string, modelName: string, details: readonly string[], results: readonly VariantResult[]): Promise<string> {
  const points = results.flatMap(({ label, speed }) => (speed?.results ?? []).flatMap((r) => [
    { model: label, concurrency: r.concurrency, throughput: r.variant.throughput },
    { model: `FP32 (A/B with ${label})`, concurrency: r.concurrency, throughput: r.baseline.throughput },
  ]));
  const chart = await renderVegaLiteChart({
    title: `${modelName}: served throughput, variant vs FP32 (A/B alternated, median of rounds)`,
    data: { values: points },
    mark: { type: "bar" },
    encoding: {
      x: { field: "concurrency", type: "ordinal", title: "concurrency" },
      xOffset: { field: "model" },
      y: { field: "throughput", type: "quantitative", title: "inferences / s" },
      color: { field: "model", type: "nominal", title: "model" },
    },
  });
  const files = await writeChartReport(dir, {
    title: `inference-optimize: ${modelName}`,
    details: [...details, `machine: ${os.cpus()[0]?.model ?? "unknown CPU"}, ${os.cpus().length} cores; ${new Date().toISOString()}`],
    chart,
    table: { header: HEADER, rows: reportRows(results) },
  });
  return files.html;
}

import { writeFile } from "node:fs/promises";
import path from "node:path";
import { formatTextTable, type ProgressStream, writeChartReport } from "../perf/index";
import { candidatesTable, formatCandidatesCsv, type RatedPoint } from "./candidate-results";
import type { TuneSummary } from "./tune-summary";
import { describeConstraints } from "./tune-constraints";
import { renderTuneChart } from "./tune-chart";
import type { TuneOptions } from "./tune-options";
import { describeSettings } from "./tuned-settings";

/** candidates.csv, summary.json, the chart and the HTML report; then the table and the verdict on stdout. */
export async function writeTuneOutputs(
  summary: TuneSummary, rated: readonly RatedPoint[], header: readonly string[], options: TuneOptions, stdout: ProgressStream,
): Promise<void> {
  await writeFile(summary.files.csv, formatCandidatesCsv(summary.candidates, rated));
  await writeFile(path.join(options.outDir, "summary.json"), `${JSON.stringify(summary, null, 2)}\n`);
  const title = `inference-tune: ${summary.model}`;
  const chart = await renderTuneChart(rated, `${summary.model}: p99 latency vs throughput per candidate`, options.constraints.latencyBudgetMs, summary.outcome);
  const table = candidatesTable(summary.candidates, rated);
  const verdict = summary.outcome === "nothing-met-constraints"
    ? `no candidate met the constraints (${describeConstraints(options.constraints)}); no config.pbtxt written`
    : summary.outcome === "tuned" ? `config.pbtxt holds ${describeSettings(summary.pick!.settings)}`
      : summary.confirmation?.verdict === "no-measurable-difference" ? "no measurable difference side by side: config.pbtxt keeps the starting configuration"
        : "config.pbtxt keeps the starting configuration";
  await writeChartReport(options.outDir, {
    title,
    details: [
      verdict,
      ...header,
      ...summary.changes.map((change) => `changed ${change.field}: ${change.from} -> ${change.to}`),
      `starting configuration: ${describeSettings(summary.start)}`,
      `windows: perf_analyzer's stability rule (last 3 windows within ${options.measurement.stabilityPercentage}%, at most ${options.measurement.maxTrials}), each at least ${options.measurement.measurementIntervalMs} ms and long enough for about 12 executions`,
      ...summary.notes,
    ],
    chart,
    table,
  });
  stdout.write(`${formatTextTable(table.header, table.rows)}\n${verdict}\n${summary.changes.map((c) => `  ${c.field}: ${c.from} -> ${c.to}\n`).join("")}`);
  stdout.write(`wrote ${[summary.files.config, summary.files.csv, summary.files.report].filter((f) => f !== undefined).join(", ")}\n`);
}

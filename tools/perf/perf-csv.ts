import { type PerfReport, type PerfReportRow, perfReportRow } from "./perf-report";

const us = (value: number): string => String(Math.floor(value));

function sortedRows(report: PerfReport): PerfReportRow[] {
  return report.levels.map(({ level, result }) => perfReportRow(level, result)).sort((a, b) => a.throughput - b.throughput);
}

/**
 * perf_analyzer's `-f` CSV: one row per load level sorted by throughput, latencies in whole µs, columns
 * `Concurrency|Request Rate, Inferences/Second, Client Send, Network+Server Send/Recv, Server Queue,
 * Server Compute Input, Server Compute Infer, Server Compute Output, Client Recv, p50/p90/p95/p99 latency`
 * (plus the `--percentile` one in order). For an ensemble, queue and compute are its composing models' totals.
 */
export function formatPerfCsv(report: PerfReport): string {
  const rows = sortedRows(report);
  const percentiles = [...(rows[0]?.percentilesUs.keys() ?? [])];
  const header = [
    report.mode === "concurrency" ? "Concurrency" : "Request Rate", "Inferences/Second", "Client Send", "Network+Server Send/Recv",
    "Server Queue", "Server Compute Input", "Server Compute Infer", "Server Compute Output", "Client Recv",
    ...percentiles.map((p) => `p${p} latency`),
  ];
  const lines = rows.map((row) => [
    String(row.level), String(Number(row.throughput.toFixed(4))), us(row.clientSendUs), us(row.networkServerSendRecvUs),
    us(row.server.queueUs), us(row.server.computeInputUs), us(row.server.computeInferUs), us(row.server.computeOutputUs),
    us(row.clientRecvUs), ...percentiles.map((p) => us(row.percentilesUs.get(p) ?? 0)),
  ].join(","));
  return [header.join(","), ...lines].join("\n") + "\n";
}

/** One composing model's CSV, written beside the ensemble's as `<name>_v<version>.<file name>`. */
export interface ComposingModelCsv {
  readonly fileNamePrefix: string;
  readonly text: string;
}

/**
 * perf_analyzer's CSVs for an ensemble's composing models, one per model in the same rows and columns as the
 * ensemble's: Inferences/Second is the client's scaled by the model's requests per ensemble request,
 * Network+Server Send/Recv holds the model's own overhead, Client Send and Client Recv are 0, no percentiles.
 * Empty for a model that is not an ensemble.
 */
export function formatComposingModelCsvs(report: PerfReport): ComposingModelCsv[] {
  const rows = sortedRows(report);
  const models = rows[0]?.composing ?? [];
  const header = [
    report.mode === "concurrency" ? "Concurrency" : "Request Rate", "Inferences/Second", "Client Send", "Network+Server Send/Recv",
    "Server Queue", "Server Compute Input", "Server Compute Infer", "Server Compute Output", "Client Recv",
  ].join(",");
  return models.map((model, index) => ({
    fileNamePrefix: `${model.name}_v${model.version}.`,
    text: [header, ...rows.map((row) => {
      const step = row.composing[index]!;
      const b = step.breakdown;
      return [String(row.level), String(Number(step.throughput.toFixed(4))), "0", us(b.overheadUs), us(b.queueUs), us(b.computeInputUs), us(b.computeInferUs), us(b.computeOutputUs), "0"].join(",");
    })].join("\n") + "\n",
  }));
}

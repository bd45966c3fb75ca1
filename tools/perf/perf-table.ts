import { type PerfReport, perfReportRow } from "./perf-report";
import { formatTextTable } from "./text-table";

const ms = (us: number): string => (us / 1000).toFixed(2);

/** Heading and cells of the results table, shared by the terminal and the HTML report. */
export interface PerfTable {
  readonly title: string;
  readonly header: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

/**
 * The table a person reads: per load level, throughput, client latency percentiles and the server-side
 * breakdown (overhead + queue + compute input/infer/output, per request), in milliseconds.
 */
export function perfTable(report: PerfReport): PerfTable {
  const header = [
    report.mode === "concurrency" ? "concurrency" : "request rate", "infer/s", "p50 ms", "p90 ms", "p95 ms", "p99 ms", "avg ms",
    "client send/recv ms", "server overhead ms", "queue ms", "compute in/infer/out ms", "stable",
  ];
  const rows = report.levels.map(({ level, result }) => perfReportRow(level, result)).map((row) => [
    String(row.level),
    row.throughput.toFixed(1),
    ...[50, 90, 95, 99].map((p) => ms(row.percentilesUs.get(p) ?? 0)),
    ms(row.avgLatencyUs),
    `${ms(row.clientSendUs)}/${ms(row.clientRecvUs)}`,
    ms(row.server.overheadUs),
    ms(row.server.queueUs),
    `${ms(row.server.computeInputUs)}/${ms(row.server.computeInferUs)}/${ms(row.server.computeOutputUs)}`,
    row.stable ? "yes" : "no",
  ]);
  const title = `${report.modelName}${report.modelVersion === undefined ? "" : ` v${report.modelVersion}`} at ${report.url} (${report.protocol}, batch ${report.batchSize}, `
    + `${report.inputTensorFormat} in / ${report.outputTensorFormat} out, ${report.measurementIntervalMs} ms windows)`;
  return { title, header, rows };
}

/** {@link perfTable} as aligned text for a terminal. */
export function formatPerfTable(report: PerfReport): string {
  const table = perfTable(report);
  return `${table.title}\n${formatTextTable(table.header, table.rows)}`;
}

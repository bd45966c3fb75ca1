import { describeEncoding, type PerfReport, perfReportRow } from "./perf-report";
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
    + `${describeEncoding(report)}, ${report.measurementIntervalMs} ms windows)`;
  return { title, header, rows };
}

/**
 * For an ensemble, perf_analyzer's "Composing models" breakdown as a table: per load level and composing model
 * (depth-first in step order, nested steps indented), its share of the throughput, its requests per ensemble
 * request and its own server time per request. Undefined for a model that is not an ensemble.
 */
export function composingModelsTable(report: PerfReport): PerfTable | undefined {
  const rows = report.levels.flatMap(({ level, result }) => perfReportRow(level, result).composing.map((step) => [
    `${"  ".repeat(step.depth - 1)}${step.name}${step.version === "" ? "" : ` v${step.version}`}`,
    String(level),
    step.throughput.toFixed(1),
    step.requestsPerTopLevelRequest.toFixed(2),
    ms(step.breakdown.requestUs),
    ms(step.breakdown.overheadUs),
    ms(step.breakdown.queueUs),
    `${ms(step.breakdown.computeInputUs)}/${ms(step.breakdown.computeInferUs)}/${ms(step.breakdown.computeOutputUs)}`,
  ]));
  if (rows.length === 0) return undefined;
  const header = ["composing model", report.mode === "concurrency" ? "concurrency" : "request rate", "infer/s", "requests/request", "server request ms", "overhead ms", "queue ms", "compute in/infer/out ms"];
  const title = `${report.modelName} is an ensemble: its queue and compute above are its composing models' totals per request; per composing model:`;
  return { title, header, rows };
}

/** {@link perfTable}, and for an ensemble {@link composingModelsTable}, as aligned text for a terminal. */
export function formatPerfTable(report: PerfReport): string {
  return [perfTable(report), composingModelsTable(report)]
    .filter((table): table is PerfTable => table !== undefined)
    .map((table) => `${table.title}\n${formatTextTable(table.header, table.rows)}`)
    .join("\n");
}

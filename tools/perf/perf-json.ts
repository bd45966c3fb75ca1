import { type PerfReport, perfReportRow } from "./perf-report";

const round = (value: number): number => Math.round(value * 10) / 10;

/** The machine-readable report (`--json`): the run's settings and, per load level, every figure in µs. */
export function formatPerfJson(report: PerfReport): string {
  return JSON.stringify({
    tool: "inference-perf",
    model: report.modelName,
    modelVersion: report.modelVersion ?? null,
    url: report.url,
    protocol: report.protocol,
    batchSize: report.batchSize,
    mode: report.mode,
    inputTensorFormat: report.inputTensorFormat,
    outputTensorFormat: report.outputTensorFormat,
    measurementIntervalMs: report.measurementIntervalMs,
    stabilityPercentage: report.stabilityPercentage,
    percentile: report.percentile ?? null,
    results: report.levels.map(({ level, result }) => {
      const row = perfReportRow(level, result);
      return {
        [report.mode === "concurrency" ? "concurrency" : "requestRate"]: level,
        stable: row.stable,
        windows: result.trials,
        requestCount: row.requestCount,
        throughput: round(row.throughput),
        latencyUs: {
          avg: round(row.avgLatencyUs), std: round(row.stdLatencyUs),
          ...Object.fromEntries([...row.percentilesUs].map(([p, us]) => [`p${p}`, round(us)])),
        },
        clientSendUs: round(row.clientSendUs),
        clientRecvUs: round(row.clientRecvUs),
        networkServerSendRecvUs: round(row.networkServerSendRecvUs),
        server: {
          inferenceCount: row.server.inferenceCount,
          executionCount: row.server.executionCount,
          successCount: row.server.successCount,
          requestUs: round(row.server.requestUs),
          overheadUs: round(row.server.overheadUs),
          queueUs: round(row.server.queueUs),
          computeInputUs: round(row.server.computeInputUs),
          computeInferUs: round(row.server.computeInferUs),
          computeOutputUs: round(row.server.computeOutputUs),
        },
      };
    }),
  }, null, 2) + "\n";
}

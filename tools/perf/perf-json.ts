import { describeEncoding, type PerfReport, perfReportRow } from "./perf-report";

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
    encoding: describeEncoding(report),
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
          // An ensemble's steps, depth-first: queue and compute above are their totals per ensemble request.
          ...(row.composing.length === 0 ? {} : { composingModels: row.composing.map((step) => ({
            model: step.name, version: step.version, depth: step.depth, throughput: round(step.throughput),
            requestsPerRequest: Math.round(step.requestsPerTopLevelRequest * 1000) / 1000,
            inferenceCount: step.inferenceCount, executionCount: step.executionCount, successCount: step.successCount,
            requestUs: round(step.breakdown.requestUs), overheadUs: round(step.breakdown.overheadUs), queueUs: round(step.breakdown.queueUs),
            computeInputUs: round(step.breakdown.computeInputUs), computeInferUs: round(step.breakdown.computeInferUs),
            computeOutputUs: round(step.breakdown.computeOutputUs),
          })) }),
        },
      };
    }),
  }, null, 2) + "\n";
}

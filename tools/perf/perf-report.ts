import type { TensorFormat } from "../../client/index";
import { REPORTED_PERCENTILES } from "./latency-summary";
import type { LoadLevelResult } from "./profile-load-level";
import { type ComposingBreakdown, composingBreakdowns, serverBreakdown, type ServerBreakdown } from "./server-side-stats";

/** What was measured, for every output format (table, CSV, JSON, chart). */
export interface PerfReport {
  readonly modelName: string;
  readonly modelVersion: string | undefined;
  readonly url: string;
  readonly protocol: "http" | "grpc";
  readonly batchSize: number;
  readonly mode: "concurrency" | "request-rate";
  readonly inputTensorFormat: TensorFormat;
  readonly outputTensorFormat: TensorFormat;
  /** --streaming: each request on a stream of its own (gRPC ModelStreamInfer, HTTP /generate_stream). */
  readonly streaming: boolean;
  readonly measurementIntervalMs: number;
  readonly stabilityPercentage: number;
  readonly percentile: number | undefined;
  readonly levels: readonly { readonly level: number; readonly result: LoadLevelResult }[];
}

/**
 * What the requests carried: gRPC sends tensors as raw contents whatever the HTTP format flags say, and HTTP
 * streaming goes through Triton's generate extension (JSON values by input name in, server-sent events out), not the
 * tensor formats the flags name.
 */
export function describeEncoding(report: Pick<PerfReport, "protocol" | "inputTensorFormat" | "outputTensorFormat" | "streaming">): string {
  if (report.protocol === "grpc") return report.streaming ? "raw contents, ModelStreamInfer" : "raw contents";
  if (report.streaming) return "JSON in / server-sent events out, /generate_stream";
  return `${report.inputTensorFormat} in / ${report.outputTensorFormat} out`;
}

/** One load level in µs and inferences/s, with perf_analyzer's derived columns. */
export interface PerfReportRow {
  /** Concurrency or request rate. */
  readonly level: number;
  readonly stable: boolean;
  readonly requestCount: number;
  readonly throughput: number;
  readonly avgLatencyUs: number;
  readonly stdLatencyUs: number;
  /** p50, p90, p95, p99 and the `--percentile` one, keyed by percentile. */
  readonly percentilesUs: ReadonlyMap<number, number>;
  readonly clientSendUs: number;
  readonly clientRecvUs: number;
  /** Client-observed time not spent encoding, decoding, queued or computing: network plus the server frontend. */
  readonly networkServerSendRecvUs: number;
  readonly server: ServerBreakdown & { readonly inferenceCount: number; readonly executionCount: number; readonly successCount: number };
  /** For an ensemble, each composing model (depth-first, step order) with its share of the throughput. */
  readonly composing: readonly (ComposingBreakdown & { readonly throughput: number })[];
}

/** Derives a report row from a load level's merged measurement. */
export function perfReportRow(level: number, result: LoadLevelResult): PerfReportRow {
  const m = result.measurement;
  const breakdown = serverBreakdown(m.server);
  const avgLatencyUs = (m.latency?.avgNs ?? 0) / 1000;
  const serverTimeUs = breakdown.queueUs + breakdown.computeInputUs + breakdown.computeInferUs + breakdown.computeOutputUs;
  const percentilesUs = new Map([...(m.latency?.percentilesNs ?? new Map(REPORTED_PERCENTILES.map((p) => [p, 0])))].map(([p, ns]) => [p, ns / 1000]));
  return {
    level,
    stable: result.stable,
    requestCount: m.requestCount,
    throughput: m.throughput,
    avgLatencyUs,
    stdLatencyUs: m.latency?.stdUs ?? 0,
    percentilesUs,
    clientSendUs: m.avgSendUs,
    clientRecvUs: m.avgReceiveUs,
    networkServerSendRecvUs: Math.max(0, avgLatencyUs - m.avgSendUs - m.avgReceiveUs - serverTimeUs),
    server: { ...breakdown, inferenceCount: m.server.inferenceCount, executionCount: m.server.executionCount, successCount: m.server.success.count },
    // perf_analyzer's composing throughput: the client's, scaled by the step's requests per ensemble request.
    composing: composingBreakdowns(m.server).map((step) => ({ ...step, throughput: m.throughput * step.requestsPerTopLevelRequest })),
  };
}

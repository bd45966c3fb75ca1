import { describe, expect, it } from "vitest";
import type { WindowRecords } from "../../../tools/perf/load-generator";
import type { ModelStatistics } from "../../../client/index";
import { formatComposingModelCsvs, formatPerfCsv } from "../../../tools/perf/perf-csv";
import { formatPerfJson } from "../../../tools/perf/perf-json";
import { summarizeMeasurement } from "../../../tools/perf/perf-measurement";
import { type PerfReport, perfReportRow } from "../../../tools/perf/perf-report";
import { formatPerfTable } from "../../../tools/perf/perf-table";
import { type ModelSteps, type ServerSideStats, serverStatsDelta } from "../../../tools/perf/server-side-stats";

/** `count` requests of `latencyUs` each over one second, 10 µs to encode and 5 to decode each. */
function window(count: number, latencyUs: number): WindowRecords {
  return {
    startNs: 0, endNs: 1e9, latenciesNs: new Array<number>(count).fill(latencyUs * 1000), sendNsTotal: count * 10_000,
    receiveNsTotal: count * 5_000, delayedCount: 0, sentCount: count,
  };
}

function server(count: number): ServerSideStats {
  const per = (us: number) => ({ count, ns: count * us * 1000 });
  return { inferenceCount: count, executionCount: count, success: per(700), queue: per(100), computeInput: per(20), computeInfer: per(500), computeOutput: per(30) };
}

const level = (latencyUs: number, count: number) => ({
  stable: true, trials: 3, measurement: summarizeMeasurement([window(count, latencyUs)], server(count), 1),
});

const report: PerfReport = {
  modelName: "simple", modelVersion: undefined, url: "http://127.0.0.1:8000", protocol: "http", batchSize: 1, mode: "concurrency",
  inputTensorFormat: "binary", outputTensorFormat: "binary", streaming: false, measurementIntervalMs: 1000, stabilityPercentage: 10, percentile: undefined,
  levels: [{ level: 2, result: level(2000, 1000) }, { level: 1, result: level(1000, 800) }],
};

describe("perf_analyzer CSV", () => {
  it("has perf_analyzer's columns and rows sorted by throughput, in whole µs", () => {
    const [header, ...rows] = formatPerfCsv(report).trimEnd().split("\n");
    expect(header).toBe("Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input,"
      + "Server Compute Infer,Server Compute Output,Client Recv,p50 latency,p90 latency,p95 latency,p99 latency");
    // network+server = avg latency - send - recv - (queue + compute) = 1000 - 10 - 5 - 650 = 335
    expect(rows).toEqual(["1,800,10,335,100,20,500,30,5,1000,1000,1000,1000", "2,1000,10,1335,100,20,500,30,5,2000,2000,2000,2000"]);
  });

  it("names the first column after the load mode", () => {
    expect(formatPerfCsv({ ...report, mode: "request-rate" })).toMatch(/^Request Rate,Inferences\/Second,/);
  });
});

describe("JSON report", () => {
  it("carries the settings and every figure per level", () => {
    const json = JSON.parse(formatPerfJson(report)) as { mode: string; results: Record<string, unknown>[] };
    expect(json).toMatchObject({ tool: "inference-perf", model: "simple", mode: "concurrency", batchSize: 1 });
    expect(json.results[1]).toEqual({
      concurrency: 1, stable: true, windows: 3, requestCount: 800, throughput: 800,
      latencyUs: { avg: 1000, std: 0, p50: 1000, p90: 1000, p95: 1000, p99: 1000 },
      clientSendUs: 10, clientRecvUs: 5, networkServerSendRecvUs: 335,
      server: { inferenceCount: 800, executionCount: 800, successCount: 800, requestUs: 700, overheadUs: 50, queueUs: 100, computeInputUs: 20, computeInferUs: 500, computeOutputUs: 30 },
    });
  });
});

describe("terminal table", () => {
  it("shows one row per level with throughput, percentiles and the server breakdown in ms", () => {
    const lines = formatPerfTable(report).trimEnd().split("\n");
    expect(lines[0]).toBe("simple at http://127.0.0.1:8000 (http, batch 1, binary in / binary out, 1000 ms windows)");
    expect(lines[1]).toMatch(/^concurrency\s+infer\/s\s+p50 ms/);
    expect(lines[3]).toMatch(/^2\s+1000\.0\s+2\.00\s+2\.00\s+2\.00\s+2\.00\s+2\.00\s+0\.01\/0\.01\s+0\.05\s+0\.10\s+0\.02\/0\.50\/0\.03\s+yes$/);
    expect(lines).toHaveLength(5);
  });

  it("labels a gRPC run with what it sends: raw tensor contents, whatever the HTTP format flags say", () => {
    const grpc: PerfReport = { ...report, protocol: "grpc", url: "grpc://127.0.0.1:8001" };
    expect(formatPerfTable(grpc).split("\n")[0]).toBe("simple at grpc://127.0.0.1:8001 (grpc, batch 1, raw contents, 1000 ms windows)");
    expect(JSON.parse(formatPerfJson(grpc))).toMatchObject({ protocol: "grpc", encoding: "raw contents" });
  });

  it("labels a streaming run with what it sends: Triton's generate extension over HTTP, ModelStreamInfer over gRPC", () => {
    const http: PerfReport = { ...report, streaming: true };
    expect(formatPerfTable(http).split("\n")[0]).toBe("simple at http://127.0.0.1:8000 (http, batch 1, JSON in / server-sent events out, /generate_stream, 1000 ms windows)");
    const grpc: PerfReport = { ...report, streaming: true, protocol: "grpc", url: "grpc://127.0.0.1:8001" };
    expect(JSON.parse(formatPerfJson(grpc))).toMatchObject({ protocol: "grpc", encoding: "raw contents, ModelStreamInfer" });
  });
});

describe("an ensemble's breakdown by composing model", () => {
  /** A step's statistics: `requests` successes of `us` each per phase. */
  function step(name: string, requests: number, us: { request: number; queue: number; infer: number }): ModelStatistics {
    const stat = (perRequestUs: number) => ({ count: requests, ns: requests * perRequestUs * 1000 });
    return {
      name, version: "1", last_inference: 0, inference_count: requests * 4, execution_count: requests,
      inference_stats: {
        success: stat(us.request), fail: stat(0), queue: stat(us.queue), compute_input: stat(10), compute_infer: stat(us.infer), compute_output: stat(10),
        cache_hit: stat(0), cache_miss: stat(0),
      },
      batch_stats: [],
    };
  }
  const model: ModelSteps = {
    name: "image_classifier", version: undefined,
    steps: [{ name: "image_preprocess", version: undefined, steps: [] }, { name: "squeezenet", version: undefined, steps: [] }],
  };
  // What the server reports for an ensemble: its own request time, no queue or compute of its own.
  const after = [
    step("image_classifier", 100, { request: 5000, queue: 0, infer: 0 }),
    step("image_preprocess", 100, { request: 1500, queue: 100, infer: 1200 }),
    step("squeezenet", 100, { request: 3000, queue: 400, infer: 2500 }),
    step("unrelated", 999, { request: 1, queue: 1, infer: 1 }),
  ];
  const ensembleReport: PerfReport = {
    ...report, modelName: "image_classifier", batchSize: 4,
    levels: [{ level: 1, result: { stable: true, trials: 3, measurement: summarizeMeasurement([window(100, 6000)], serverStatsDelta([], after, model), 4) } }],
  };

  it("takes queue and compute from the steps, so the ensemble's time is not all overhead", () => {
    const server = perfReportRow(1, ensembleReport.levels[0]!.result).server;
    expect(server).toMatchObject({ requestUs: 5000, queueUs: 500, computeInputUs: 20, computeInferUs: 3700, computeOutputUs: 20, overheadUs: 760 });
  });

  it("lists each composing model in the table, CSV files and JSON", () => {
    const text = formatPerfTable(ensembleReport);
    expect(text).toContain("image_classifier is an ensemble: its queue and compute above are its composing models' totals per request; per composing model:");
    expect(text).toMatch(/\nimage_preprocess v1\s+1\s+400\.0\s+1\.00\s+1\.50\s+0\.18\s+0\.10\s+0\.01\/1\.20\/0\.01\n/);
    expect(text).toMatch(/\nsqueezenet v1\s+1\s+400\.0\s+1\.00\s+3\.00\s+0\.08\s+0\.40\s+0\.01\/2\.50\/0\.01\n/);

    expect(formatPerfCsv(ensembleReport).split("\n")[1]).toBe("1,400,10,1745,500,20,3700,20,5,6000,6000,6000,6000");
    expect(formatComposingModelCsvs(ensembleReport)).toEqual([
      { fileNamePrefix: "image_preprocess_v1.", text: `${COMPOSING_HEADER}\n1,400,0,180,100,10,1200,10,0\n` },
      { fileNamePrefix: "squeezenet_v1.", text: `${COMPOSING_HEADER}\n1,400,0,80,400,10,2500,10,0\n` },
    ]);

    const json = JSON.parse(formatPerfJson(ensembleReport)) as { results: { server: { composingModels: unknown[] } }[] };
    expect(json.results[0]!.server.composingModels).toEqual([
      { model: "image_preprocess", version: "1", depth: 1, throughput: 400, requestsPerRequest: 1, inferenceCount: 400, executionCount: 100, successCount: 100, requestUs: 1500, overheadUs: 180, queueUs: 100, computeInputUs: 10, computeInferUs: 1200, computeOutputUs: 10 },
      { model: "squeezenet", version: "1", depth: 1, throughput: 400, requestsPerRequest: 1, inferenceCount: 400, executionCount: 100, successCount: 100, requestUs: 3000, overheadUs: 80, queueUs: 400, computeInputUs: 10, computeInferUs: 2500, computeOutputUs: 10 },
    ]);
  });

  it("has no composing models for a model that is not an ensemble", () => {
    expect(formatComposingModelCsvs(report)).toEqual([]);
    expect(formatPerfTable(report)).not.toContain("composing");
  });
});

const COMPOSING_HEADER = "Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv";

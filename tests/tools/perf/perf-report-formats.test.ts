import { describe, expect, it } from "vitest";
import type { WindowRecords } from "../../../tools/perf/load-generator";
import { formatPerfCsv } from "../../../tools/perf/perf-csv";
import { formatPerfJson } from "../../../tools/perf/perf-json";
import { summarizeMeasurement } from "../../../tools/perf/perf-measurement";
import type { PerfReport } from "../../../tools/perf/perf-report";
import { formatPerfTable } from "../../../tools/perf/perf-table";
import type { ServerSideStats } from "../../../tools/perf/server-side-stats";

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
  inputTensorFormat: "binary", outputTensorFormat: "binary", measurementIntervalMs: 1000, stabilityPercentage: 10, percentile: undefined,
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
});

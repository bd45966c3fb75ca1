import { describe, expect, it } from "vitest";
import { type CandidateRecord, candidateScore, candidatesTable, formatCandidatesCsv, ratePoints } from "../../../tools/tune/candidate-results";
import { gpuCountFromMetrics, serverFailureReason } from "../../../tools/tune/candidate-server";
import { windowForExecutionRate } from "../../../tools/tune/measure-candidate";
import { measuredPoint, TUNE_SETTINGS } from "../../helpers/tune-points";

const SETTINGS = TUNE_SETTINGS;
const point = measuredPoint;

const candidates: CandidateRecord[] = [
  { id: "start", settings: SETTINGS, points: [point(16, 100, 40)], failure: undefined },
  { id: "c1", settings: { ...SETTINGS, instanceCount: 2, intraOpThreads: 1 }, points: [point(4, 150, 20), point(8, 180, 60)], failure: undefined },
  { id: "c2", settings: { ...SETTINGS, device: { kind: "KIND_GPU", accelerator: "tensorrt" }, intraOpThreads: undefined }, points: [], failure: 'does not load: "x", y' },
];

describe("candidate results", () => {
  it("rates every point against the constraints, the Pareto front and the pick", () => {
    const { points, pick } = ratePoints(candidates, { latencyBudgetMs: 50, minThroughput: undefined });
    expect(pick?.candidate.id).toBe("c1");
    expect(pick?.point.concurrency).toBe(4);
    expect(points.map((p) => [p.candidate.id, p.point.concurrency, p.satisfies, p.onParetoFront])).toEqual([
      ["start", 16, true, false], ["c1", 4, true, true], ["c1", 8, false, true],
    ]);
    expect(candidateScore(candidates[1]!, { latencyBudgetMs: 50, minThroughput: undefined })).toBe(150);
    expect(candidateScore(candidates[2]!, { latencyBudgetMs: undefined, minThroughput: undefined })).toBe(-1);
    // Missing the budget, the nearer miss scores higher: c1's 20 ms is 100% over 10 ms (-0.5), start's 40 ms 300% (-0.75).
    expect(candidateScore(candidates[1]!, { latencyBudgetMs: 10, minThroughput: undefined })).toBe(-0.5);
    expect(candidateScore(candidates[0]!, { latencyBudgetMs: 10, minThroughput: undefined })).toBe(-0.75);
  });

  it("writes one CSV row per measured level and one per failure, server times in µs", () => {
    const { points } = ratePoints(candidates, { latencyBudgetMs: undefined, minThroughput: undefined });
    const [header, ...rows] = formatCandidatesCsv(candidates, points).trimEnd().split("\n");
    expect(header!.split(",")).toHaveLength(27);
    expect(header).toContain("Inferences/Second,p50 Latency (ms),p90 Latency (ms),p99 Latency (ms)");
    expect(header).toContain("Server Queue (us),Server Compute Input (us),Server Compute Infer (us),Server Compute Output (us)");
    expect(rows).toEqual([
      "start,KIND_CPU,,1,2,8,yes,100,4,16,100.00,20.000,36.000,40.000,20.000,300,10,480,10,3.50,true,3,1000,true,false,false,",
      "c1,KIND_CPU,,2,1,8,yes,100,4,4,150.00,10.000,18.000,20.000,10.000,300,10,480,10,3.50,true,3,1000,true,true,false,",
      "c1,KIND_CPU,,2,1,8,yes,100,4,8,180.00,30.000,54.000,60.000,30.000,300,10,480,10,3.50,true,3,1000,true,true,true,",
      `c2,KIND_GPU,tensorrt,1,,8,yes,100,4,,,,,,,,,,,,,,,,,,"does not load: ""x"", y"`,
    ]);
    const table = candidatesTable(candidates, points);
    expect(table.rows.map((row) => row[0])).toEqual(["c1", "c1", "start", "c2"]);
    expect(table.rows[0]!.at(-1)).toBe("pick, Pareto front");
    expect(table.rows[3]!.at(-1)).toBe('failed: does not load: "x", y');
  });
});

describe("candidate servers", () => {
  it("finds why a server failed in its JSON log, and counts the GPUs its metrics report", () => {
    const log = [
      '{"level":30,"msg":"loading"}',
      '{"level":50,"msg":"failed to load \'m\' version 1: KIND_GPU instance needs the ONNX Runtime CUDA execution provider"}',
      '{"level":60,"msg":"model \'m\' failed to load"}',
      "",
    ].join("\n");
    expect(serverFailureReason(log)).toBe("model 'm' failed to load");
    expect(serverFailureReason("Error: bad flag\n")).toBe("Error: bad flag");
    expect(serverFailureReason("")).toBe("the server exited without output");
    const metrics = [
      "# HELP nv_gpu_memory_total_bytes GPU total memory, in bytes",
      'nv_gpu_memory_total_bytes{gpu_uuid="GPU-1"} 16000000000',
      'nv_gpu_memory_total_bytes{gpu_uuid="GPU-2"} 16000000000',
      'nv_gpu_utilization{gpu_uuid="GPU-3"} 0.5',
    ].join("\n");
    expect(gpuCountFromMetrics(metrics)).toBe(2);
    expect(gpuCountFromMetrics("nv_cpu_utilization 0.2\n")).toBe(0);
  });

  it("sizes windows to about 12 executions within the interval and its cap", () => {
    expect(windowForExecutionRate(100, 500, 2000)).toBe(500);
    expect(windowForExecutionRate(8, 500, 2000)).toBe(1500);
    expect(windowForExecutionRate(1, 500, 2000)).toBe(2000);
    expect(windowForExecutionRate(0, 500, 2000)).toBe(2000);
  });
});

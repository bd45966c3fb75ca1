import path from "node:path";
import { describe, expect, it } from "vitest";
import { buildTuneCommand, parseTuneOptions } from "../../../tools/tune/tune-options";

function quiet(): ReturnType<typeof buildTuneCommand> {
  return buildTuneCommand().configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
}

const parse = (...argv: string[]) => parseTuneOptions(argv, quiet());

describe("parseTuneOptions", () => {
  it("defaults to Model Analyzer's brute search with no constraints, writing to ./inference-tune-<model>", () => {
    const options = parse("-m", "resnet50", "--model-repository", "models");
    expect(options).toMatchObject({
      modelName: "resnet50", modelRepository: path.resolve("models"), mode: "brute", protocol: "http",
      constraints: { latencyBudgetMs: undefined, minThroughput: undefined }, concurrencyRange: undefined, maxConcurrency: 1024,
      maxCandidates: Number.MAX_SAFE_INTEGER, abRounds: 5, inputData: "random", outDir: path.resolve("inference-tune-resnet50"),
      measurement: { measurementIntervalMs: 2000, maxWindowMs: 8000, stabilityPercentage: 10, maxTrials: 10 },
      lists: { instanceCounts: undefined, maxBatchSizes: undefined },
    });
  });

  it("gives quick search shorter windows and a candidate budget, and reads every list and constraint", () => {
    const options = parse(
      "-m", "m", "--model-repository", "r", "--quick", "--latency-budget-ms", "50", "--min-throughput", "100.5", "-i", "grpc",
      "--concurrency-range", "4:16:4", "--instance-counts", "1,2", "--intra-op-threads", "1, 2", "--max-batch-sizes", "8,32",
      "--queue-delays-us", "0,100", "--preferred-batch-sizes", "none,8", "--gpu-accelerators", "tensorrt,cuda", "--shape", "X:3,4",
      "--out", "o", "-p", "500", "-r", "4", "--ab-rounds", "5",
    );
    expect(options).toMatchObject({
      mode: "quick", maxCandidates: 20, protocol: "grpc", constraints: { latencyBudgetMs: 50, minThroughput: 100.5 },
      concurrencyRange: { start: 4, end: 16, step: 4 }, abRounds: 5, outDir: path.resolve("o"),
      measurement: { measurementIntervalMs: 500, maxWindowMs: 2000, maxTrials: 4 },
      lists: { instanceCounts: [1, 2], intraOpThreads: [1, 2], maxBatchSizes: [8, 32], queueDelaysUs: [0, 100], preferredBatchSizes: [0, 8], gpuAccelerators: ["tensorrt", "cuda"] },
    });
    expect([...options.shapes]).toEqual([["X", [3, 4]]]);
    expect(parse("-m", "m", "--model-repository", "r", "--quick").measurement).toMatchObject({ measurementIntervalMs: 1000, maxTrials: 6 });
  });

  it("rejects bad values with commander's one-line error", () => {
    expect(() => parse("--model-repository", "r")).toThrow(/required option '-m, --model-name <name>' not specified/);
    expect(() => parse("-m", "m")).toThrow(/required option '--model-repository <dir>' not specified/);
    expect(() => parse("-m", "m", "--model-repository", "r", "--instance-counts", "1,0")).toThrow(/'0' is not an integer >= 1/);
    expect(() => parse("-m", "m", "--model-repository", "r", "--preferred-batch-sizes", "some")).toThrow(/'some' is not an integer >= 1 or 'none'/);
    expect(() => parse("-m", "m", "--model-repository", "r", "--gpu-accelerators", "openvino")).toThrow(/'openvino' is not one of cuda, tensorrt, webgpu/);
    expect(() => parse("-m", "m", "--model-repository", "r", "--concurrency-range", "1:0")).toThrow(/end 0/);
    expect(() => parse("-m", "m", "--model-repository", "r", "--ab-rounds", "2")).toThrow(/must be an integer >= 3/);
    expect(() => parse("-m", "m", "--model-repository", "r", "--latency-budget-ms", "-1")).toThrow(/must be a positive number/);
    expect(() => parse("-m", "m", "--model-repository", "r", "-i", "ws")).toThrow(/Allowed choices are http, grpc/);
  });
});

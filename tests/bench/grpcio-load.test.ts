import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inferenceMethod, serializedInferRequest } from "../../bench/grpc-stream-sender";
import { grpcioMissing, startGrpcioLoad } from "../../bench/grpcio-load";
import { type RunningServer, startServer } from "../helpers/server-process";

const IMAGE_FLOATS = 3 * 224 * 224;

async function successCount(server: RunningServer, model: string): Promise<number> {
  const stats = await (await fetch(`${server.httpUrl}/v2/models/${model}/stats`)).json() as { model_stats: { inference_stats: { success: { count: number } } }[] };
  return stats.model_stats[0]!.inference_stats.success.count;
}

describe("the bench's gRPC C-core load processes (python3-grpcio)", () => {
  let server: RunningServer;
  let dir: string;
  const request = (model: string): string => {
    const file = path.join(dir, `${model}.bin`);
    const data = Float32Array.from({ length: IMAGE_FLOATS }, (_, i) => i);
    writeFileSync(file, serializedInferRequest(inferenceMethod("ModelInfer"), model, [{ name: "INPUT0", datatype: "FP32", shape: [1, IMAGE_FLOATS], data }]));
    return file;
  };
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "grpcio-load-"));
    server = await startServer({ services: ["http", "grpc"] });
  });
  afterAll(async () => {
    await server?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it("finds grpcio where npm test installed it", () => {
    expect(grpcioMissing()).toBeUndefined();
  });

  it("sends 600 KB requests from two processes at once and reports every request it sent", async () => {
    const load = await startGrpcioLoad(server.grpcAddress!, request("identity_fp32"), 2);
    try {
      // Each process sends one call before it says it is ready.
      expect(await successCount(server, "identity_fp32")).toBe(2);
      const { measured, sent, cpuShares } = await load.measure({ concurrency: 4, warmupMs: 100, durationMs: 500 });
      expect(measured.throughput).toBeGreaterThan(0);
      expect(measured.p99Ms).toBeGreaterThanOrEqual(measured.p50Ms);
      expect(cpuShares).toHaveLength(2);
      expect(await successCount(server, "identity_fp32")).toBe(2 + sent);
    } finally {
      await load.stop();
    }
  });

  it("fails to start with the server's error when its request is refused", async () => {
    await expect(startGrpcioLoad(server.grpcAddress!, request("no_such_model"), 1)).rejects.toThrow(/grpcio load process failed: NOT_FOUND: Request for unknown model: 'no_such_model' is not found/);
  });
});

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BackendInstance, InstanceSpec, TensorMap } from "../../../server/backends/backend";
import { INLINE_MODEL_MAX_BYTES, OnnxruntimeBackend } from "../../../server/backends/onnxruntime/onnxruntime-backend";
import { publicOrtMessage } from "../../../server/backends/onnxruntime/ort-error-message";
import { OnnxGraphBuilder } from "../../../tools/model-builder/index";
import { executeBatch, executeRequests } from "../../helpers/backend-execution";
import { EXAMPLE_REPOSITORY } from "../../helpers/server-process";

const spec = (modelPath: string): InstanceSpec => ({
  modelName: "m", modelVersion: 1, modelPath, modelDirectory: path.dirname(path.dirname(modelPath)), modelConfig: {}, instanceName: "m_0", device: "cpu", deviceId: 0, accelerators: [],
  parameters: {}, intraOpThreads: 1, graphOptimizationLevel: 0,
});

const int32 = (values: number[]): Uint8Array => new Uint8Array(Int32Array.from(values).buffer);

/** A model tiny on disk (no weights) but slow: a 384x384 matrix squared, tens of milliseconds per run. */
function slowTinyModel(file: string): void {
  const g = new OnnxGraphBuilder("slow_tiny");
  g.addInput("X", "FLOAT", [384, 384]);
  g.addNode({ opType: "MatMul", inputs: ["X", "X"], outputs: ["Y1"] });
  g.addNode({ opType: "MatMul", inputs: ["Y1", "X"], outputs: ["Y"] });
  g.addOutput("Y", "FLOAT", [384, 384]);
  writeFileSync(file, g.toModelBytes());
}

describe("ONNX Runtime backend: where instances execute", () => {
  // The inline/worker decision compares each run with a time budget; these budgets sit far beyond any machine's
  // speed (every run overruns 1 ns, none reaches an hour), so the verdicts do not depend on the CPU.
  const backend = new OnnxruntimeBackend({ inlineExecutionBudgetNs: 3_600e9 });
  const overrunEveryRun = new OnnxruntimeBackend({ inlineExecutionBudgetNs: 1 });
  const instances: BackendInstance[] = [];
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "ort-backend-"));
  });
  afterAll(async () => {
    await Promise.all(instances.map((i) => i.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs a tiny model on the calling thread, with correct results", async () => {
    const instance = await backend.createInstance(spec(path.join(EXAMPLE_REPOSITORY, "simple", "1", "model.onnx")));
    instances.push(instance);
    expect(instance.executionThread).toBe("main");
    const inputs: TensorMap = new Map([
      ["INPUT0", { datatype: "INT32", shape: [1, 16], data: int32(Array.from({ length: 16 }, (_, i) => i)) }],
      ["INPUT1", { datatype: "INT32", shape: [1, 16], data: int32(Array(16).fill(2)) }],
    ]);
    const outputs = await executeBatch(instance, inputs, ["OUTPUT0", "OUTPUT1"]);
    const out0 = outputs.get("OUTPUT0")!;
    expect(out0.shape).toEqual([1, 16]);
    expect([...new Int32Array(out0.data.slice().buffer)]).toEqual(Array.from({ length: 16 }, (_, i) => i + 2));
    expect(instance.io?.inputs.map((t) => t.name)).toEqual(["INPUT0", "INPUT1"]);
    for (let i = 0; i < 5; i++) await executeBatch(instance, inputs, ["OUTPUT0"]);
    expect(instance.executionThread).toBe("main");
  });

  it("moves a tiny-but-slow model to a worker thread, and keeps answering correctly", async () => {
    const file = path.join(dir, "slow.onnx");
    slowTinyModel(file);
    const instance = await overrunEveryRun.createInstance(spec(file));
    instances.push(instance);
    expect(instance.executionThread).toBe("main");
    const identity = new Float32Array(384 * 384);
    for (let i = 0; i < 384; i++) identity[i * 384 + i] = 1;
    const run = (): Promise<unknown> => executeBatch(instance, new Map([["X", { datatype: "FP32", shape: [384, 384], data: new Uint8Array(identity.slice().buffer) }]]), ["Y"]);
    for (let i = 0; i < 3; i++) await run();
    const outputs = await executeBatch(instance, new Map([["X", { datatype: "FP32", shape: [384, 384], data: new Uint8Array(identity.slice().buffer) }]]), ["Y"]);
    expect(instance.executionThread).toBe("worker");
    const y = new Float32Array(outputs.get("Y")!.data.slice().buffer);
    expect(y[0]).toBe(1);
    expect(y[1]).toBe(0);
    expect(y[385]).toBe(1);
  });

  it("gives every model above the size limit a worker of its own", async () => {
    const resnet = path.join(EXAMPLE_REPOSITORY, "resnet50", "1", "model.onnx");
    expect(INLINE_MODEL_MAX_BYTES).toBeLessThan(1024 * 1024);
    const instance = await backend.createInstance(spec(resnet));
    instances.push(instance);
    expect(instance.executionThread).toBe("worker");
  });
});

/** A batching model (Y = X + X, FP32 `[N, 4]`) with unused weights that put it past the inline limit: it runs on a worker. */
function doublingWorkerModel(file: string): void {
  const g = new OnnxGraphBuilder("doubling");
  g.addInput("X", "FLOAT", ["N", 4]);
  g.addInitializer("padding", [INLINE_MODEL_MAX_BYTES / 4 + 1024], new Float32Array(INLINE_MODEL_MAX_BYTES / 4 + 1024));
  g.addNode({ opType: "Add", inputs: ["X", "X"], outputs: ["Y"] });
  g.addOutput("Y", "FLOAT", ["N", 4]);
  writeFileSync(file, g.toModelBytes());
}

/** `rows` of FP32 `[rows.length, 4]` written into `buffer` at an odd offset, as a tensor lies in a request body. */
function rowsIn(buffer: ArrayBufferLike, offset: number, rows: number[]): Uint8Array {
  const bytes = new Uint8Array(buffer, offset, rows.length * 16);
  const values = new Float32Array(rows.flatMap((row) => [row, row + 0.25, row + 0.5, row + 0.75]));
  bytes.set(new Uint8Array(values.buffer));
  return bytes;
}

describe("ONNX Runtime backend: batches from request memory the session's thread shares", () => {
  let dir: string;
  let instance: BackendInstance;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "ort-shared-"));
    doublingWorkerModel(path.join(dir, "model.onnx"));
    instance = await new OnnxruntimeBackend().createInstance(spec(path.join(dir, "model.onnx")));
  });
  afterAll(async () => {
    await instance.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const run = async (datas: Uint8Array[]): Promise<number[][]> => {
    const { responses } = await executeRequests(instance, datas.map((data) => ({
      inputs: new Map([["X", { datatype: "FP32", shape: [data.byteLength / 16, 4], data }]]), batchSize: data.byteLength / 16, parameters: {}, requestedOutputs: ["Y"],
    })));
    return responses.map((response) => {
      if ("error" in response) throw new Error(response.error.message);
      return [...new Float32Array(response.outputs.get("Y")!.data.slice().buffer)];
    });
  };
  const doubled = (rows: number[]): number[] => rows.flatMap((row) => [2 * row, 2 * row + 0.5, 2 * row + 1, 2 * row + 1.5]);

  it("gathers a batch whose parts all lie in shared memory on its thread, each request getting its own rows, again and again", async () => {
    expect(instance.executionThread).toBe("worker");
    const body = new SharedArrayBuffer(4096);
    for (let round = 0; round < 3; round++) {
      // The same memory rewritten for each round, as pooled bodies are: every answer must be this round's.
      const parts = [rowsIn(body, 3, [round]), rowsIn(body, 101, [10 + round, 20 + round]), rowsIn(new SharedArrayBuffer(64), 7, [30 + round])];
      expect(await run(parts)).toEqual([doubled([round]), doubled([10 + round, 20 + round]), doubled([30 + round])]);
    }
    // One request alone, unaligned in shared memory.
    expect(await run([rowsIn(body, 1, [5])])).toEqual([doubled([5])]);
  });

  it("gathers on the main thread a batch with any part in memory of its own, and shares none of it", async () => {
    const own = rowsIn(new ArrayBuffer(64), 0, [7]);
    expect(await run([rowsIn(new SharedArrayBuffer(64), 2, [1]), own, rowsIn(new ArrayBuffer(64), 5, [8])])).toEqual([doubled([1]), doubled([7]), doubled([8])]);
    // The request's own memory was copied, not moved away: the core's view of it still reads.
    expect(own.byteLength).toBe(16);
    expect(new Float32Array(own.slice().buffer)[0]).toBe(7);
  });
});

describe("ONNX Runtime backend: error messages", () => {
  it("keep what ONNX Runtime says went wrong, without its source paths and C++ signatures", async () => {
    const backend = new OnnxruntimeBackend();
    const instance = await backend.createInstance(spec(path.join(EXAMPLE_REPOSITORY, "simple", "1", "model.onnx")));
    try {
      // Batch sizes that do not broadcast: only the core's validation keeps this from a real request.
      const inputs: TensorMap = new Map([
        ["INPUT0", { datatype: "INT32", shape: [2, 16], data: int32(Array(32).fill(1)) }],
        ["INPUT1", { datatype: "INT32", shape: [3, 16], data: int32(Array(48).fill(1)) }],
      ]);
      const error = await executeBatch(instance, inputs, ["OUTPUT0", "OUTPUT1"]).then(() => undefined, (e: unknown) => e as Error);
      expect(error?.message).toMatch(/^onnxruntime execution failed: Non-zero status code returned while running (Add|Sub) node\. Name:'OUTPUT[01]' Status Message: axis == 1 \|\| axis == largest was false\. Attempting to broadcast an axis by a dimension other than 1\. 2 by 3$/);
    } finally {
      await instance.close();
    }
  });
});

describe("publicOrtMessage", () => {
  it("drops a source location with or without a signature, and nothing else", () => {
    expect(publicOrtMessage("Status Message: /onnxruntime_src/onnxruntime/core/framework/op_kernel.cc:83 virtual OrtValue* onnxruntime::OpKernelContext::OutputMLValue(int, const onnxruntime::TensorShape&) status.IsOK() was false. Shape mismatch (2 by 3)"))
      .toBe("Status Message: status.IsOK() was false. Shape mismatch (2 by 3)");
    expect(publicOrtMessage("/onnxruntime_src/onnxruntime/core/graph/model.cc:123 Attempting to load (model) failed"))
      .toBe("Attempting to load (model) failed");
    expect(publicOrtMessage("Got invalid dimensions for input: INPUT1 for the following indices\n index: 1 Got: 8 Expected: 16"))
      .toBe("Got invalid dimensions for input: INPUT1 for the following indices\n index: 1 Got: 8 Expected: 16");
  });
});

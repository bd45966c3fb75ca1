import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InstanceSpec } from "../../../server/backends/backend";
import { chooseExecutionProviders } from "../../../server/backends/onnxruntime/execution-providers";
import { sessionSettings } from "../../../server/backends/onnxruntime/onnxruntime-backend";
import { ortSessionOptions } from "../../../server/backends/onnxruntime/ort-worker-protocol";

const spec = (overrides: Partial<InstanceSpec> = {}): InstanceSpec => ({
  modelName: "m", modelVersion: 1, modelPath: "/m/1/model.onnx", modelDirectory: "/m", modelConfig: {}, instanceName: "m_0", device: "cpu", deviceId: 0,
  accelerators: [], parameters: {}, intraOpThreads: 2, graphOptimizationLevel: 0, ...overrides,
});

describe("execution provider choice (KIND_CPU / KIND_GPU / TensorRT precision)", () => {
  let withProviders: string;
  let empty: string;
  beforeAll(() => {
    withProviders = mkdtempSync(path.join(os.tmpdir(), "ort-libs-"));
    empty = mkdtempSync(path.join(os.tmpdir(), "ort-nolibs-"));
    for (const name of ["cuda", "tensorrt"]) writeFileSync(path.join(withProviders, `libonnxruntime_providers_${name}.so`), "");
  });
  afterAll(() => {
    rmSync(withProviders, { recursive: true, force: true });
    rmSync(empty, { recursive: true, force: true });
  });

  it("uses the CPU provider for KIND_CPU", () => {
    expect(chooseExecutionProviders(spec(), empty)).toEqual({ executionProviders: ["cpu"], environment: {} });
  });

  it("uses CUDA on the instance's GPU for KIND_GPU", () => {
    expect(chooseExecutionProviders(spec({ device: "gpu", deviceId: 1 }), withProviders))
      .toEqual({ executionProviders: [{ name: "cuda", deviceId: 1 }], environment: {} });
  });

  it("puts TensorRT first and maps precision_mode FP16 / INT8 to the EP's settings", () => {
    const trt = (precision: string): InstanceSpec => spec({ device: "gpu", accelerators: [{ name: "tensorrt", parameters: { precision_mode: precision, max_workspace_size_bytes: "1073741824" } }] });
    expect(chooseExecutionProviders(trt("FP16"), withProviders)).toEqual({
      executionProviders: [{ name: "tensorrt", deviceId: 0 }, { name: "cuda", deviceId: 0 }],
      environment: { ORT_TENSORRT_FP16_ENABLE: "1", ORT_TENSORRT_MAX_WORKSPACE_SIZE: "1073741824" },
    });
    expect(chooseExecutionProviders(trt("INT8"), withProviders).environment).toMatchObject({ ORT_TENSORRT_INT8_ENABLE: "1", ORT_TENSORRT_FP16_ENABLE: "1" });
    expect(() => chooseExecutionProviders(trt("FP8"), withProviders)).toThrow(/unsupported TensorRT precision_mode 'FP8'/);
  });

  it("fails a GPU instance with an actionable reason when the provider library is absent", () => {
    expect(() => chooseExecutionProviders(spec({ device: "gpu" }), empty)).toThrow(/CUDA execution provider, but .*libonnxruntime_providers_cuda\.so is not installed/);
    expect(() => chooseExecutionProviders(spec({ device: "gpu", accelerators: [{ name: "openvino", parameters: {} }] }), withProviders)).toThrow(/unsupported gpu_execution_accelerator 'openvino'/);
  });
});

describe("ONNX Runtime session settings from Triton's model parameters", () => {
  it("sizes intra-op threads from the instance spec unless the model overrides it", () => {
    expect(sessionSettings(spec(), ["cpu"])).toMatchObject({ intraOpNumThreads: 2, interOpNumThreads: 1, executionMode: "sequential", graphOptimizationLevel: "all", allowSpinning: false });
    expect(sessionSettings(spec({ parameters: { allow_spinning: "true" } }), ["cpu"])).toMatchObject({ allowSpinning: true });
    expect(ortSessionOptions(sessionSettings(spec(), ["cpu"]))).toMatchObject({
      intraOpNumThreads: 2, extra: { session: { intra_op: { allow_spinning: "0" }, inter_op: { allow_spinning: "0" } } },
    });
    expect(sessionSettings(spec({ parameters: { intra_op_thread_count: "1", execution_mode: "1", enable_mem_arena: "false" }, graphOptimizationLevel: -1 }), ["cpu"]))
      .toMatchObject({ intraOpNumThreads: 1, executionMode: "parallel", enableCpuMemArena: false, graphOptimizationLevel: "basic" });
    expect(() => sessionSettings(spec({ parameters: { intra_op_thread_count: "two" } }), ["cpu"])).toThrow(/intra_op_thread_count must be a non-negative integer/);
  });
});

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InstanceSpec } from "../../../server/backends/backend";
import { chooseExecutionProviders, webgpuUnavailable } from "../../../server/backends/onnxruntime/execution-providers";
import { OnnxruntimeBackend, sessionSettings } from "../../../server/backends/onnxruntime/onnxruntime-backend";
import { ortSessionOptions } from "../../../server/backends/onnxruntime/ort-worker-protocol";

const spec = (overrides: Partial<InstanceSpec> = {}): InstanceSpec => ({
  modelName: "m", modelVersion: 1, modelPath: "/m/1/model.onnx", modelDirectory: "/m", modelConfig: {}, instanceName: "m_0", device: "cpu", deviceId: 0,
  accelerators: [], parameters: {}, intraOpThreads: 2, graphOptimizationLevel: 0, ...overrides,
});

describe("execution provider choice (KIND_CPU / KIND_GPU / named accelerators / TensorRT precision)", () => {
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
  const gpu = (overrides: Partial<InstanceSpec> = {}): InstanceSpec => spec({ device: "gpu", ...overrides });
  const named = (name: string, parameters: Record<string, string> = {}): InstanceSpec["accelerators"] => [{ name, parameters }];

  it("uses the CPU provider for KIND_CPU", () => {
    expect(chooseExecutionProviders(spec(), empty)).toEqual({ provider: "cpu", executionProviders: ["cpu"], environment: {} });
  });

  it("uses CUDA on the instance's GPU for KIND_GPU when the CUDA provider is installed", () => {
    expect(chooseExecutionProviders(gpu({ deviceId: 1 }), withProviders))
      .toEqual({ provider: "cuda", executionProviders: [{ name: "cuda", deviceId: 1 }], environment: {} });
  });

  it("falls back to WebGPU (NHWC) for KIND_GPU when no CUDA provider is installed, and remembers what was missing", () => {
    expect(chooseExecutionProviders(gpu(), empty)).toEqual({
      provider: "webgpu", executionProviders: [{ name: "webgpu", preferredLayout: "NHWC" }], environment: {},
      missingLibrary: path.join(empty, "libonnxruntime_providers_cuda.so"),
    });
  });

  it("uses WebGPU when named, even with CUDA installed, with its parameters as the EP's options", () => {
    expect(chooseExecutionProviders(gpu({ accelerators: named("webgpu", { preferred_layout: "NCHW", validation_mode: "disabled" }) }), withProviders)).toEqual({
      provider: "webgpu", executionProviders: [{ name: "webgpu", preferredLayout: "NCHW", validationMode: "disabled" }], environment: {},
    });
    expect(() => chooseExecutionProviders(gpu({ accelerators: named("webgpu", { device: "1" }) }), empty)).toThrow(/unsupported parameter 'device' of gpu_execution_accelerator 'webgpu' \(supported: preferred_layout/);
    expect(() => chooseExecutionProviders(gpu({ accelerators: named("webgpu", { preferred_layout: "NWHC" }) }), empty)).toThrow(/preferred_layout must be one of NHWC, NCHW, got 'NWHC'/);
    expect(() => chooseExecutionProviders(gpu({ accelerators: [...named("webgpu"), ...named("cuda")] }), withProviders)).toThrow(/cannot be combined/);
  });

  it("refuses gpus other than the first for WebGPU, which has no device selection, and honours them for CUDA", () => {
    expect(() => chooseExecutionProviders(gpu({ deviceId: 1, accelerators: named("webgpu") }), empty)).toThrow(/cannot honour gpus: \[1\]: onnxruntime-node's WebGPU provider always uses the first GPU adapter/);
    expect(() => chooseExecutionProviders(gpu({ deviceId: 2 }), empty)).toThrow(/falls back to ONNX Runtime's WebGPU provider .*cannot honour gpus: \[2\]/);
    expect(chooseExecutionProviders(gpu({ deviceId: 2, accelerators: named("cuda") }), withProviders).executionProviders).toEqual([{ name: "cuda", deviceId: 2 }]);
  });

  it("tells the core when GPU instances can run on the first GPU only: WebGPU, named or fallen back to", () => {
    const withoutCuda = new OnnxruntimeBackend({ providerLibraryDirectory: empty });
    const withCuda = new OnnxruntimeBackend({ providerLibraryDirectory: withProviders });
    expect(withoutCuda.firstGpuOnly([])).toBe("onnxruntime-node's WebGPU provider takes no device id (install the CUDA provider to use every GPU)");
    expect(withCuda.firstGpuOnly(named("webgpu"))).toMatch(/WebGPU provider takes no device id/);
    expect(withCuda.firstGpuOnly([])).toBeUndefined();
    expect(withoutCuda.firstGpuOnly(named("cuda"))).toBeUndefined();
    expect(withoutCuda.firstGpuOnly(named("tensorrt"))).toBeUndefined();
  });

  it("puts TensorRT first and maps precision_mode FP16 / INT8 to the EP's settings", () => {
    const trt = (precision: string): InstanceSpec => gpu({ accelerators: named("tensorrt", { precision_mode: precision, max_workspace_size_bytes: "1073741824" }) });
    expect(chooseExecutionProviders(trt("FP16"), withProviders)).toEqual({
      provider: "tensorrt",
      executionProviders: [{ name: "tensorrt", deviceId: 0 }, { name: "cuda", deviceId: 0 }],
      environment: { ORT_TENSORRT_FP16_ENABLE: "1", ORT_TENSORRT_MAX_WORKSPACE_SIZE: "1073741824" },
    });
    expect(chooseExecutionProviders(trt("INT8"), withProviders).environment).toMatchObject({ ORT_TENSORRT_INT8_ENABLE: "1", ORT_TENSORRT_FP16_ENABLE: "1" });
    expect(() => chooseExecutionProviders(trt("FP8"), withProviders)).toThrow(/unsupported TensorRT precision_mode 'FP8'/);
  });

  it("fails a named CUDA/TensorRT instance with an actionable reason when the provider library is absent", () => {
    expect(() => chooseExecutionProviders(gpu({ accelerators: named("cuda") }), empty)).toThrow(/'cuda' needs the ONNX Runtime CUDA execution provider, but .*libonnxruntime_providers_cuda\.so is not installed/);
    expect(() => chooseExecutionProviders(gpu({ accelerators: named("tensorrt") }), empty)).toThrow(/'tensorrt' needs the ONNX Runtime TENSORRT execution provider/);
    expect(() => chooseExecutionProviders(gpu({ accelerators: named("openvino") }), withProviders)).toThrow(/unsupported gpu_execution_accelerator 'openvino' \(supported: tensorrt, cuda, webgpu\)/);
  });

  it("words a WebGPU start failure with what is missing and how to get it", () => {
    const message = webgpuUnavailable(chooseExecutionProviders(gpu(), empty), "Failed to get a WebGPU adapter: No supported adapters\n").message;
    expect(message).toMatch(/^KIND_GPU instance found no usable GPU: the CUDA execution provider is not installed \(.*libonnxruntime_providers_cuda\.so\) and ONNX Runtime's WebGPU provider could not start \(Failed to get a WebGPU adapter: No supported adapters\)/);
    expect(message).toMatch(/libvulkan1.*NVIDIA_DRIVER_CAPABILITIES including graphics.*ONNXRUNTIME_NODE_INSTALL=cuda12.*KIND_CPU/);
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

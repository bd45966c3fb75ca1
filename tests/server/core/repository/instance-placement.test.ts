import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Backend, BackendInstance, InstanceSpec } from "../../../../server/backends/backend";
import { IdentityBackend } from "../../../../server/backends/identity-backend";
import { OnnxruntimeBackend } from "../../../../server/backends/onnxruntime/onnxruntime-backend";
import { InferenceCore } from "../../../../server/core/index";
import { writeSimpleModel } from "../../../helpers/simple-model";
import { inferOn } from "../../../helpers/core-infer";

/**
 * Where instances land on a machine that has a GPU device (the core is told so) but no usable GPU provider: ONNX
 * Runtime for real, with no CUDA provider library and no Vulkan driver, so WebGPU finds no adapter. KIND_AUTO must
 * fall back to CPU with one warning; KIND_GPU must fail with a reason that says what is missing.
 */
describe("instance placement on a machine whose GPU is unusable", () => {
  let repository: string;
  let noProviderLibraries: string;
  let core: InferenceCore;
  const warnings: string[] = [];
  const infos: string[] = [];
  const savedVulkanDrivers = process.env["VK_DRIVER_FILES"];

  beforeAll(async () => {
    repository = mkdtempSync(path.join(os.tmpdir(), "placement-"));
    noProviderLibraries = mkdtempSync(path.join(os.tmpdir(), "placement-nolibs-"));
    // No Vulkan driver even where a loader and an NVIDIA ICD exist: the WebGPU provider must find no adapter here.
    process.env["VK_DRIVER_FILES"] = path.join(noProviderLibraries, "no-icd.json");
    writeSimpleModel(repository, "auto_default", "max_batch_size: 8\n");
    writeSimpleModel(repository, "auto_explicit", "max_batch_size: 8\ninstance_group [ { kind: KIND_AUTO, count: 1 } ]\n");
    writeSimpleModel(repository, "gpu_only", "max_batch_size: 8\ninstance_group [ { kind: KIND_GPU } ]\n");
    writeSimpleModel(repository, "gpu_second", "max_batch_size: 8\ninstance_group [ { kind: KIND_GPU, gpus: [ 1 ] } ]\n");
    writeSimpleModel(repository, "cpu_only", "max_batch_size: 8\ninstance_group [ { kind: KIND_CPU, count: 1 } ]\n");
    core = new InferenceCore({
      modelRepositories: [repository], serverName: "triton", serverVersion: "test", strictReadiness: true, exitOnError: false,
      modelControlMode: "none", repositoryPollMs: 0, responseCacheBytes: undefined, startupModels: [],
      log: { info: (m) => infos.push(m), warn: (m) => warnings.push(m) },
      loader: {
        autoCompleteConfig: true, gpuCount: 2, cpuCount: 2, defaultMaxBatchSize: 4, intraOpThreads: 1, instanceRestart: { initialBackoffMs: 100, maxBackoffMs: 1000 },
        backends: new Map<string, Backend>([["onnxruntime", new OnnxruntimeBackend({ providerLibraryDirectory: noProviderLibraries })]]),
      },
    });
    await core.start();
  });
  afterAll(async () => {
    await core.close();
    if (savedVulkanDrivers === undefined) delete process.env["VK_DRIVER_FILES"];
    else process.env["VK_DRIVER_FILES"] = savedVulkanDrivers;
    rmSync(repository, { recursive: true, force: true });
    rmSync(noProviderLibraries, { recursive: true, force: true });
  });

  const stateOf = (name: string): { state: string; reason: string } | undefined => core.repositoryIndex(false).find((e) => e.name === name);

  it("loads KIND_AUTO models on CPU, with one warning each, and serves them", async () => {
    for (const name of ["auto_default", "auto_explicit"]) {
      expect(stateOf(name)?.state, name).toBe("READY");
      const group = (core.modelConfig(name) as { instance_group: { kind: string; count: number; gpus: number[] }[] }).instance_group[0]!;
      expect(group.kind).toBe("KIND_CPU");
      expect(group.gpus).toEqual([]);
      expect(warnings.filter((w) => w.includes(`'${name}'`))).toHaveLength(1);
    }
    expect(warnings.find((w) => w.includes("'auto_default'"))).toMatch(/KIND_AUTO instances cannot use the GPU, loading them on CPU: KIND_GPU instance found no usable GPU/);
    // The CPU default instance count applies once the group is on CPU (2 for ONNX Runtime), not the GPU's 1.
    expect(core.modelGauges().find((g) => g.modelName === "auto_default")?.placements).toEqual([
      { kind: "KIND_CPU", deviceId: 0, provider: "cpu" }, { kind: "KIND_CPU", deviceId: 0, provider: "cpu" },
    ]);
    expect(infos).toContain("model 'auto_default' version 1: 2 x KIND_CPU on cpu");
    const response = await inferOn(core, {
      modelName: "auto_default",
      inputs: [
        { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: new Uint8Array(Int32Array.from({ length: 16 }, (_, i) => i).buffer) },
        { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: new Uint8Array(Int32Array.from({ length: 16 }, () => 1).buffer) },
      ],
    });
    const sum = response.outputs.find((o) => o.name === "OUTPUT0")!;
    expect([...new Int32Array(sum.data.slice().buffer)]).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
  });

  it("makes a KIND_GPU model UNAVAILABLE with what is missing and how to get it; other models are unaffected", () => {
    expect(stateOf("gpu_only")).toMatchObject({ state: "UNAVAILABLE" });
    expect(stateOf("gpu_only")?.reason).toMatch(
      /KIND_GPU instance found no usable GPU: the CUDA execution provider is not installed \(.*libonnxruntime_providers_cuda\.so\) and ONNX Runtime's WebGPU provider could not start \(.*adapter.*\).*libvulkan1/s,
    );
    expect(stateOf("gpu_second")?.reason).toMatch(/cannot honour gpus: \[1\]/);
    expect(stateOf("cpu_only")?.state).toBe("READY");
    expect(warnings.some((w) => w.includes("'gpu_only'") || w.includes("'cpu_only'"))).toBe(false);
  });
});

/** A stand-in for a GPU provider this machine lacks: instances report the provider a real GPU backend would. */
class FakeGpuBackend implements Backend {
  readonly runsModelCode = false;
  readonly name = "identity";
  readonly usesGpu = true;
  readonly #identity = new IdentityBackend();
  readonly specs: InstanceSpec[] = [];

  /** `firstGpuOnly`: the reason a provider that takes no device id would give (as WebGPU's does). */
  constructor(private readonly firstGpuOnlyReason?: string) {}

  firstGpuOnly(): string | undefined {
    return this.firstGpuOnlyReason;
  }

  async createInstance(spec: InstanceSpec): Promise<BackendInstance> {
    this.specs.push(spec);
    const instance = await this.#identity.createInstance(spec);
    return Object.assign(Object.create(instance) as BackendInstance, { executionProvider: spec.device === "gpu" ? "webgpu" : "cpu" });
  }
}

/** An identity model in a fresh directory of `repository`, with `extra` config lines. */
function writeIdentityModel(repository: string, name: string, extra: string): void {
  mkdirSync(path.join(repository, name, "1"), { recursive: true });
  writeFileSync(path.join(repository, name, "config.pbtxt"), `backend: "identity"\nmax_batch_size: 4\n` +
    `input [ { name: "IN", data_type: TYPE_FP32, dims: [ 2 ] } ]\noutput [ { name: "OUT", data_type: TYPE_FP32, dims: [ 2 ] } ]\n${extra}`);
}

/** A core on a machine with two GPUs, serving `repository` with `backend` as its identity backend. */
function twoGpuCore(repository: string, backend: Backend, warnings: string[]): InferenceCore {
  return new InferenceCore({
    modelRepositories: [repository], serverName: "triton", serverVersion: "test", strictReadiness: true, exitOnError: true,
    modelControlMode: "none", repositoryPollMs: 0, responseCacheBytes: undefined, startupModels: [],
    log: { info: () => undefined, warn: (m) => warnings.push(m) },
    loader: { autoCompleteConfig: true, gpuCount: 2, cpuCount: 2, defaultMaxBatchSize: 4, intraOpThreads: 1, instanceRestart: { initialBackoffMs: 100, maxBackoffMs: 1000 }, backends: new Map<string, Backend>([["identity", backend]]) },
  });
}

describe("instance placement where the GPU is usable", () => {
  let repository: string;
  let core: InferenceCore;
  const backend = new FakeGpuBackend();
  const warnings: string[] = [];

  beforeAll(async () => {
    repository = mkdtempSync(path.join(os.tmpdir(), "placement-gpu-"));
    writeIdentityModel(repository, "auto", "");
    writeIdentityModel(repository, "named", `instance_group [ { kind: KIND_GPU, count: 2, gpus: [ 1 ] } ]\noptimization { execution_accelerators { gpu_execution_accelerator: [ { name: "webgpu" } ] } }\n`);
    core = twoGpuCore(repository, backend, warnings);
    await core.start();
  });
  afterAll(async () => {
    await core.close();
    rmSync(repository, { recursive: true, force: true });
  });

  it("puts KIND_AUTO on every GPU, and shows the provider chosen in the config's execution_accelerators", () => {
    expect(warnings).toEqual([]);
    const config = core.modelConfig("auto") as { instance_group: { kind: string; count: number; gpus: number[] }[]; optimization: { execution_accelerators: { gpu_execution_accelerator: { name: string }[] } } };
    expect(config.instance_group[0]).toMatchObject({ kind: "KIND_GPU", count: 1, gpus: [0, 1] });
    expect(config.optimization.execution_accelerators.gpu_execution_accelerator.map((a) => a.name)).toEqual(["webgpu"]);
    expect(backend.specs.filter((s) => s.modelName === "auto").map((s) => [s.device, s.deviceId])).toEqual([["gpu", 0], ["gpu", 1]]);
  });

  it("passes gpus and the named accelerator through, leaving a named accelerator as written", () => {
    const specs = backend.specs.filter((s) => s.modelName === "named");
    expect(specs.map((s) => [s.device, s.deviceId, s.accelerators.map((a) => a.name)])).toEqual([["gpu", 1, ["webgpu"]], ["gpu", 1, ["webgpu"]]]);
    expect(core.modelGauges().find((g) => g.modelName === "named")?.placements).toEqual([
      { kind: "KIND_GPU", deviceId: 1, provider: "webgpu" }, { kind: "KIND_GPU", deviceId: 1, provider: "webgpu" },
    ]);
  });
});

describe("instance placement on two GPUs with a provider that can use only the first", () => {
  let repository: string;
  let core: InferenceCore;
  const backend = new FakeGpuBackend("the fake provider takes no device id");
  const warnings: string[] = [];

  beforeAll(async () => {
    repository = mkdtempSync(path.join(os.tmpdir(), "placement-first-gpu-"));
    writeIdentityModel(repository, "auto", "");
    writeIdentityModel(repository, "two", "instance_group [ { kind: KIND_GPU, count: 2 } ]\n");
    writeIdentityModel(repository, "listed", "instance_group [ { kind: KIND_GPU, gpus: [ 0, 1 ] } ]\n");
    core = twoGpuCore(repository, backend, warnings);
    await core.start();
  });
  afterAll(async () => {
    await core.close();
    rmSync(repository, { recursive: true, force: true });
  });

  const placed = (model: string): [string, number][] => backend.specs.filter((s) => s.modelName === model).map((s) => [s.device, s.deviceId]);
  const gpusOf = (model: string): number[] => (core.modelConfig(model) as { instance_group: { gpus: number[] }[] }).instance_group[0]!.gpus;

  it("puts groups that list no GPUs on GPU 0 alone, count instances there, with one warning each", () => {
    expect(placed("auto")).toEqual([["gpu", 0]]);
    expect(placed("two")).toEqual([["gpu", 0], ["gpu", 0]]);
    expect(gpusOf("auto")).toEqual([0]);
    expect(gpusOf("two")).toEqual([0]);
    expect(warnings.sort()).toEqual([
      "model 'auto' version 1: KIND_GPU instances run on GPU 0 only, not on each of the 2 GPUs: the fake provider takes no device id",
      "model 'two' version 1: KIND_GPU instances run on GPU 0 only, not on each of the 2 GPUs: the fake provider takes no device id",
    ]);
  });

  it("passes GPUs a group lists on as listed, for the backend to honour or refuse", () => {
    expect(placed("listed")).toEqual([["gpu", 0], ["gpu", 1]]);
    expect(gpusOf("listed")).toEqual([0, 1]);
  });
});

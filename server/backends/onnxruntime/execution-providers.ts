import { existsSync } from "node:fs";
import path from "node:path";
import type { InstanceSpec } from "../backend";

/** The execution providers this backend places instances on (Triton's accelerator names for the GPU ones). */
export type ExecutionProviderName = "cpu" | "cuda" | "tensorrt" | "webgpu";

type ProviderConfig = { name: string; deviceId?: number } | { name: "webgpu"; [option: string]: string } | string;

const GPU_ACCELERATORS = ["tensorrt", "cuda", "webgpu"] as const;
type LibraryProvider = "cuda" | "tensorrt";

/** Where onnxruntime-node keeps its native libraries for this platform (the CUDA/TensorRT providers go there). */
function bindingDirectory(): string {
  const entry = require.resolve("onnxruntime-node");
  return path.join(path.dirname(entry), "..", "bin", "napi-v6", process.platform, process.arch);
}

function providerLibrary(libraryDirectory: string, name: LibraryProvider): string {
  return path.join(libraryDirectory, `libonnxruntime_providers_${name}.so`);
}

export interface ProviderChoice {
  /** The provider the instance runs on: the first of {@link executionProviders}. */
  readonly provider: ExecutionProviderName;
  readonly executionProviders: readonly ProviderConfig[];
  /** TensorRT precision is only reachable through the EP's environment variables from Node's binding. */
  readonly environment: Readonly<Record<string, string>>;
  /**
   * Set when WebGPU was chosen because nothing better is installed: what was missing, so that a session that then
   * finds no GPU adapter fails with the whole story.
   */
  readonly missingLibrary?: string;
}

/** Model parameters of the `webgpu` accelerator, as Triton spells them, and the option each becomes. */
const WEBGPU_PARAMETERS: Readonly<Record<string, { option: string; values: readonly string[] }>> = {
  preferred_layout: { option: "preferredLayout", values: ["NHWC", "NCHW"] },
  validation_mode: { option: "validationMode", values: ["disabled", "wgpuOnly", "basic", "full"] },
  storage_buffer_cache_mode: { option: "storageBufferCacheMode", values: ["disabled", "lazyRelease", "simple", "bucket"] },
};

/**
 * WebGPU options from the accelerator's parameters. NHWC is the default: measured on an H100, ResNet-50 at batch 32
 * runs at 898 img/s with NHWC and 647 with NCHW.
 */
function webgpuProvider(parameters: Readonly<Record<string, string>>): ProviderConfig {
  const provider: { name: "webgpu"; [option: string]: string } = { name: "webgpu", preferredLayout: "NHWC" };
  for (const [key, value] of Object.entries(parameters)) {
    const known = WEBGPU_PARAMETERS[key];
    if (known === undefined) throw new Error(`unsupported parameter '${key}' of gpu_execution_accelerator 'webgpu' (supported: ${Object.keys(WEBGPU_PARAMETERS).join(", ")})`);
    if (!known.values.includes(value)) throw new Error(`webgpu parameter ${key} must be one of ${known.values.join(", ")}, got '${value}'`);
    provider[known.option] = value;
  }
  return provider;
}

/** onnxruntime-node passes no device id to the WebGPU EP: it always opens the first (high-performance) adapter. */
function requireFirstAdapter(spec: InstanceSpec, why: string): void {
  if (spec.deviceId !== 0) {
    throw new Error(
      `${why}, which cannot honour gpus: [${spec.deviceId}]: onnxruntime-node's WebGPU provider always uses the first GPU ` +
      "adapter (list gpus: [0], or install the CUDA provider, which takes a device id)",
    );
  }
}

function tensorrtEnvironment(parameters: Readonly<Record<string, string>>): Record<string, string> {
  const environment: Record<string, string> = {};
  const precision = parameters["precision_mode"]?.toUpperCase() ?? "FP32";
  if (precision === "FP16") environment["ORT_TENSORRT_FP16_ENABLE"] = "1";
  else if (precision === "INT8") Object.assign(environment, { ORT_TENSORRT_FP16_ENABLE: "1", ORT_TENSORRT_INT8_ENABLE: "1" });
  else if (precision !== "FP32") throw new Error(`unsupported TensorRT precision_mode '${precision}' (FP32, FP16 or INT8)`);
  const workspace = parameters["max_workspace_size_bytes"];
  if (workspace !== undefined) environment["ORT_TENSORRT_MAX_WORKSPACE_SIZE"] = workspace;
  return environment;
}

/**
 * Whether GPU instances with these accelerators run on ONNX Runtime's WebGPU provider: it is named, or nothing is
 * named and the CUDA provider's library is not installed.
 */
export function runsOnWebgpu(accelerators: InstanceSpec["accelerators"], libraryDirectory = bindingDirectory()): boolean {
  const names = accelerators.map((a) => a.name);
  if (names.includes("webgpu")) return true;
  return !names.includes("tensorrt") && !names.includes("cuda") && !existsSync(providerLibrary(libraryDirectory, "cuda"));
}

/**
 * Picks execution providers from the instance kind and Triton's `execution_accelerators`:
 * - KIND_CPU: the CPU provider.
 * - `tensorrt` or `cuda` named: those providers (TensorRT falls back to CUDA per node), which need onnxruntime-node's
 *   provider libraries; absent, the instance fails with how to install them.
 * - `webgpu` named: ONNX Runtime's WebGPU provider (bundled in libonnxruntime.so; runs on Vulkan).
 * - KIND_GPU, nothing named: CUDA when its library is installed, else WebGPU.
 * ONNX Runtime never falls back from a provider it cannot load to CPU (session creation throws), so these choices
 * are made here, where the reason can be put into words.
 */
export function chooseExecutionProviders(spec: InstanceSpec, libraryDirectory = bindingDirectory()): ProviderChoice {
  if (spec.device === "cpu") return { provider: "cpu", executionProviders: ["cpu"], environment: {} };
  const unknown = spec.accelerators.find((a) => !(GPU_ACCELERATORS as readonly string[]).includes(a.name));
  if (unknown !== undefined) {
    throw new Error(`unsupported gpu_execution_accelerator '${unknown.name}' (supported: ${GPU_ACCELERATORS.join(", ")})`);
  }
  const named = (name: (typeof GPU_ACCELERATORS)[number]): InstanceSpec["accelerators"][number] | undefined => spec.accelerators.find((a) => a.name === name);
  const webgpu = named("webgpu");
  const tensorrt = named("tensorrt");
  const cuda = named("cuda");
  if (webgpu !== undefined) {
    if (tensorrt !== undefined || cuda !== undefined) throw new Error("gpu_execution_accelerator 'webgpu' cannot be combined with 'cuda' or 'tensorrt': name one provider family");
    requireFirstAdapter(spec, "gpu_execution_accelerator 'webgpu' selects ONNX Runtime's WebGPU provider");
    return { provider: "webgpu", executionProviders: [webgpuProvider(webgpu.parameters)], environment: {} };
  }
  const installed = (name: LibraryProvider): boolean => existsSync(providerLibrary(libraryDirectory, name));
  if (runsOnWebgpu(spec.accelerators, libraryDirectory)) {
    const missingLibrary = providerLibrary(libraryDirectory, "cuda");
    requireFirstAdapter(spec, `KIND_GPU without a named accelerator falls back to ONNX Runtime's WebGPU provider (${missingLibrary} is not installed)`);
    return { provider: "webgpu", executionProviders: [webgpuProvider({})], environment: {}, missingLibrary };
  }
  const needed: LibraryProvider[] = tensorrt ? ["tensorrt", "cuda"] : ["cuda"];
  for (const name of needed) {
    const library = providerLibrary(libraryDirectory, name);
    if (!installed(name)) {
      throw new Error(
        `gpu_execution_accelerator '${name}' needs the ONNX Runtime ${name.toUpperCase()} execution provider, but ${library} is not installed ` +
        "(install onnxruntime-node with ONNXRUNTIME_NODE_INSTALL=cuda12 on a CUDA machine, name 'webgpu' instead, or use KIND_CPU)",
      );
    }
  }
  return {
    provider: needed[0]!,
    executionProviders: needed.map((name) => ({ name, deviceId: spec.deviceId })),
    environment: tensorrt !== undefined ? tensorrtEnvironment(tensorrt.parameters) : {},
  };
}

/**
 * The load error of a WebGPU instance whose session could not start (no Vulkan loader, no adapter), with what the
 * operator can do about it.
 */
export function webgpuUnavailable(choice: ProviderChoice, detail: string): Error {
  const missing = choice.missingLibrary !== undefined ? `the CUDA execution provider is not installed (${choice.missingLibrary}) and ` : "";
  return new Error(
    `KIND_GPU instance found no usable GPU: ${missing}ONNX Runtime's WebGPU provider could not start (${detail.trim()}). ` +
    "For WebGPU, install the Vulkan loader (Debian/Ubuntu: libvulkan1) and expose the NVIDIA driver's Vulkan ICD " +
    "(NVIDIA_DRIVER_CAPABILITIES including graphics; VK_DRIVER_FILES pointing at nvidia_icd.json); for CUDA, install " +
    "onnxruntime-node with ONNXRUNTIME_NODE_INSTALL=cuda12; or use KIND_CPU (KIND_AUTO falls back to CPU by itself). Without a GPU, " +
    "--allow-software-gpu runs it on a software Vulkan driver (Mesa's lavapipe), on the CPU",
  );
}

import { existsSync } from "node:fs";
import path from "node:path";
import type { InstanceSpec } from "../backend";

type ProviderConfig = { name: string; deviceId?: number } | string;

/** Where onnxruntime-node keeps its native libraries for this platform (the CUDA/TensorRT providers go there). */
function bindingDirectory(): string {
  const entry = require.resolve("onnxruntime-node");
  return path.join(path.dirname(entry), "..", "bin", "napi-v6", process.platform, process.arch);
}

function providerLibrary(libraryDirectory: string, name: "cuda" | "tensorrt"): string {
  return path.join(libraryDirectory, `libonnxruntime_providers_${name}.so`);
}

export interface ProviderChoice {
  readonly executionProviders: readonly ProviderConfig[];
  /** TensorRT precision is only reachable through the EP's environment variables from Node's binding. */
  readonly environment: Readonly<Record<string, string>>;
}

/**
 * Picks execution providers from the instance kind and Triton's `execution_accelerators`. ONNX Runtime does not
 * fall back from a missing CUDA provider to CPU (session creation throws), so a GPU instance whose provider
 * library is absent fails here with a reason the operator can act on.
 */
export function chooseExecutionProviders(spec: InstanceSpec, libraryDirectory = bindingDirectory()): ProviderChoice {
  if (spec.device === "cpu") return { executionProviders: ["cpu"], environment: {} };
  const tensorrt = spec.accelerators.find((a) => a.name === "tensorrt");
  const unknown = spec.accelerators.find((a) => a.name !== "tensorrt" && a.name !== "cuda");
  if (unknown !== undefined) {
    throw new Error(`unsupported gpu_execution_accelerator '${unknown.name}' (supported: tensorrt, cuda)`);
  }
  const needed: ("cuda" | "tensorrt")[] = tensorrt ? ["tensorrt", "cuda"] : ["cuda"];
  for (const name of needed) {
    const library = providerLibrary(libraryDirectory, name);
    if (!existsSync(library)) {
      throw new Error(
        `KIND_GPU instance needs the ONNX Runtime ${name.toUpperCase()} execution provider, but ${library} is not installed ` +
        `(install onnxruntime-node with ONNXRUNTIME_NODE_INSTALL=cuda12 on a CUDA machine, or use KIND_CPU)`,
      );
    }
  }
  const environment: Record<string, string> = {};
  const precision = tensorrt?.parameters["precision_mode"]?.toUpperCase() ?? "FP32";
  if (precision === "FP16") environment["ORT_TENSORRT_FP16_ENABLE"] = "1";
  else if (precision === "INT8") Object.assign(environment, { ORT_TENSORRT_FP16_ENABLE: "1", ORT_TENSORRT_INT8_ENABLE: "1" });
  else if (precision !== "FP32") throw new Error(`unsupported TensorRT precision_mode '${precision}' (FP32, FP16 or INT8)`);
  const workspace = tensorrt?.parameters["max_workspace_size_bytes"];
  if (workspace !== undefined) environment["ORT_TENSORRT_MAX_WORKSPACE_SIZE"] = workspace;
  return {
    executionProviders: needed.map((name) => ({ name, deviceId: spec.deviceId })),
    environment,
  };
}

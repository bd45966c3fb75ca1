import type { ModelConfig } from "./model-config";

/** Triton's default --min-supported-compute-capability (TRITON_MIN_COMPUTE_CAPABILITY), printed as std::to_string prints it. */
const MIN_COMPUTE_CAPABILITY = "6.000000";
const TENSORRT_PLATFORM = "tensorrt_plan";

/**
 * Triton's ValidateInstanceGroup (core src/model_config_utils.cc), on groups normalized for `gpuCount` GPUs (ids
 * 0..gpuCount-1), with its messages: GPU ids only on KIND_GPU groups, each one a GPU this machine has, and
 * `profile` only for TensorRT. Triton makes it as it creates a version's model, before the backend reads a file.
 * Where no GPU was found, a KIND_GPU group is left to its execution provider, whose error says what is missing.
 */
export function validateInstanceGroups(config: ModelConfig, gpuCount: number): void {
  if (config.ensemble_scheduling !== undefined) return;
  const gpus = Array.from({ length: gpuCount }, (_, id) => id);
  for (const group of config.instance_group) {
    const named = `instance group ${group.name} of model ${config.name}`;
    if ((group.kind === "KIND_CPU" || group.kind === "KIND_MODEL") && group.gpus.length > 0) {
      throw new Error(`${named} has kind ${group.kind} but specifies one or more GPUs`);
    }
    const unknown = group.kind === "KIND_GPU" && gpuCount > 0 ? group.gpus.find((id) => !gpus.includes(id)) : undefined;
    if (unknown !== undefined) {
      throw new Error(
        `${named} specifies invalid or unsupported gpu id ${unknown}. GPUs with at least the minimum required CUDA compute compatibility of ` +
        `${MIN_COMPUTE_CAPABILITY} are: ${gpus.join(", ")}`,
      );
    }
    if (config.platform !== TENSORRT_PLATFORM && group.profile.length > 0) {
      // Triton's text, its missing space before "specifies" included.
      throw new Error(`${named} and platform ${config.platform}specifies profile field which is only supported for TensorRT models`);
    }
  }
}

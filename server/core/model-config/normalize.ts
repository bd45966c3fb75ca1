import type { Backend } from "../../backends/backend";
import type { ModelConfig, ModelInstanceGroup } from "./model-config";

/**
 * Triton's backend fields once the backend is known: a backend that serves platforms names its platform (the
 * config's own when it is one of them, else its first) and its name; any other backend leaves them as written.
 */
export function normalizeBackendFields(config: ModelConfig, backend: Pick<Backend, "name" | "platforms">): ModelConfig {
  const platforms = backend.platforms ?? [];
  if (platforms.length === 0) return config;
  return { ...config, platform: platforms.includes(config.platform) ? config.platform : platforms[0]!, backend: backend.name };
}

/** Where a version's instance groups may go. */
export interface InstanceGroupContext {
  readonly gpuCount: number;
  /** KIND_AUTO means the GPU (else the CPU). */
  readonly autoOnGpu: boolean;
  /** The backend's provider cannot address a GPU other than the first (Backend.firstGpuOnly said why). */
  readonly firstGpuOnly: boolean;
  /** Instances of a KIND_CPU group that gives no count (Backend.defaultCpuInstanceCount). */
  readonly defaultCpuInstanceCount: number;
}

const DEFAULT_GROUP: ModelInstanceGroup = {
  name: "", kind: "KIND_AUTO", count: 0, gpus: [], profile: [], passive: false, host_policy: "", secondary_devices: [],
};

/**
 * Triton's instance group normalization: a config without groups gets one KIND_AUTO group; KIND_AUTO becomes
 * KIND_GPU or KIND_CPU, KIND_MODEL KIND_CPU; a group gets the name `<model>_<index>` and its default count; a
 * KIND_GPU group without `gpus` gets every GPU, or GPU 0 alone where `firstGpuOnly`.
 */
export function normalizeInstanceGroups(config: ModelConfig, context: InstanceGroupContext): ModelConfig {
  const declared = config.instance_group.length > 0 ? config.instance_group : [DEFAULT_GROUP];
  const instance_group = declared.map((group, index): ModelInstanceGroup => {
    const kind = group.kind === "KIND_AUTO" ? (context.autoOnGpu ? "KIND_GPU" : "KIND_CPU") : group.kind === "KIND_MODEL" ? "KIND_CPU" : group.kind;
    const count = group.count > 0 ? group.count : kind === "KIND_CPU" ? context.defaultCpuInstanceCount : 1;
    // A KIND_AUTO group that lands on the CPU keeps no GPU ids (Triton keeps them, and then refuses the group).
    const gpus = group.kind === "KIND_AUTO" && kind === "KIND_CPU" ? []
      : kind !== "KIND_GPU" || group.gpus.length > 0 ? [...group.gpus]
      : context.gpuCount > 0 && !context.firstGpuOnly ? Array.from({ length: context.gpuCount }, (_, i) => i) : [0];
    return { ...structuredClone(group), kind, name: group.name === "" ? `${config.name}_${index}` : group.name, count, gpus };
  });
  return { ...config, instance_group };
}

/** Triton's NormalizeModelConfig: none given means `[max_batch_size]`, and none at all for a model that does not batch. */
function preferredBatchSizes(given: readonly number[], config: ModelConfig): number[] {
  return given.length > 0 || config.max_batch_size <= 0 ? [...given] : [config.max_batch_size];
}

/** Triton's SEQUENCE_IDLE_DEFAULT_MICROSECONDS. */
const SEQUENCE_IDLE_DEFAULT_US = 1_000_000;

/**
 * The defaults Triton's NormalizeModelConfig writes into a loaded model's config (core src/model_config_utils.cc),
 * so that `/config` shows them as Triton does: `version_policy` latest 1, the model file name the backend loads,
 * the sequence batcher's idle time, and pinned input and output memory for models that are not ensembles; an
 * ensemble's `model_transaction_policy` (not decoupled: ensembles of decoupled steps are not supported here), which Triton sets when it validates
 * the ensemble. A dynamic or oldest-first batcher without preferred batch sizes gets `[max_batch_size]`, which is
 * what the batcher falls back to anyway (batcher.ts), so the batching is the same either way.
 */
export function withTritonDefaults(config: ModelConfig, defaultModelFilename: string | undefined): ModelConfig {
  const completed: ModelConfig = {
    ...config,
    version_policy: config.version_policy ?? { latest: { num_versions: 1 } },
    default_model_filename: config.default_model_filename || (defaultModelFilename ?? ""),
  };
  if (config.dynamic_batching !== undefined) {
    completed.dynamic_batching = { ...config.dynamic_batching, preferred_batch_size: preferredBatchSizes(config.dynamic_batching.preferred_batch_size, config) };
  }
  if (config.sequence_batching !== undefined) {
    const { oldest, max_sequence_idle_microseconds: idle } = config.sequence_batching;
    completed.sequence_batching = {
      ...config.sequence_batching,
      max_sequence_idle_microseconds: idle === 0 ? SEQUENCE_IDLE_DEFAULT_US : idle,
      ...(oldest !== undefined ? { oldest: { ...oldest, preferred_batch_size: preferredBatchSizes(oldest.preferred_batch_size, config) } } : {}),
    };
  }
  if (config.ensemble_scheduling !== undefined) {
    completed.model_transaction_policy = config.model_transaction_policy ?? { decoupled: false };
    return completed;
  }
  const optimization = config.optimization ?? { priority: "PRIORITY_DEFAULT", gather_kernel_buffer_threshold: 0, eager_batching: false };
  completed.optimization = {
    ...optimization,
    input_pinned_memory: optimization.input_pinned_memory ?? { enable: true },
    output_pinned_memory: optimization.output_pinned_memory ?? { enable: true },
  };
  return completed;
}

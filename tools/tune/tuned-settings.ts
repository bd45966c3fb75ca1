import type { ModelConfig } from "../../client/index";

/** `optimization.execution_accelerators.gpu_execution_accelerator` names a KIND_GPU candidate may use. */
export const GPU_ACCELERATORS = ["cuda", "tensorrt", "webgpu"] as const;
export type GpuAccelerator = (typeof GPU_ACCELERATORS)[number];

/** Where a model's instances run: the CPU, or a GPU through one execution provider. */
export type InstanceDevice =
  | { readonly kind: "KIND_CPU" }
  | { readonly kind: "KIND_GPU"; readonly accelerator: GpuAccelerator };

export interface DynamicBatchingSettings {
  readonly maxQueueDelayUs: number;
  readonly preferredBatchSizes: readonly number[];
}

/** The fields of a model configuration that inference-tune changes; everything else stays as the user wrote it. */
export interface TunedSettings {
  readonly device: InstanceDevice;
  /** Instances over all instance groups. */
  readonly instanceCount: number;
  /** ONNX Runtime intra-op threads per instance (model parameter `intra_op_thread_count`); undefined: not tuned (GPU). */
  readonly intraOpThreads: number | undefined;
  /** 0: the model does not batch (its dims carry no batch dimension, so this is never changed). */
  readonly maxBatchSize: number;
  /** Undefined: no `dynamic_batching`, each request executes on its own. */
  readonly dynamicBatching: DynamicBatchingSettings | undefined;
}

/**
 * The settings a served model runs with, read from its effective configuration (`GET /v2/models/{m}/config`, after
 * the server's auto-complete and instance-kind resolution). Threads follow the server's rule when the model does
 * not set them: cores divided by instances.
 */
export function settingsOfConfig(config: ModelConfig, cores: number): TunedSettings {
  const groups = config.instance_group ?? [];
  const instanceCount = Math.max(1, groups.reduce((total, group) => total + group.count, 0));
  const parameters = config["parameters"] as Record<string, { string_value?: string }> | undefined;
  const threadsParameter = parameters?.["intra_op_thread_count"]?.string_value;
  const optimization = config["optimization"] as { execution_accelerators?: { gpu_execution_accelerator?: { name: string }[] } } | undefined;
  const acceleratorName = optimization?.execution_accelerators?.gpu_execution_accelerator?.[0]?.name ?? "cuda";
  const device: InstanceDevice = groups[0]?.kind === "KIND_GPU"
    ? { kind: "KIND_GPU", accelerator: (GPU_ACCELERATORS as readonly string[]).includes(acceleratorName) ? acceleratorName as GpuAccelerator : "cuda" }
    : { kind: "KIND_CPU" };
  const batching = config.dynamic_batching as { max_queue_delay_microseconds?: number; preferred_batch_size?: number[] } | undefined;
  return {
    device,
    instanceCount,
    intraOpThreads: threadsParameter !== undefined && Number(threadsParameter) > 0
      ? Number(threadsParameter)
      : device.kind === "KIND_CPU" ? Math.max(1, Math.floor(cores / instanceCount)) : undefined,
    maxBatchSize: config.max_batch_size,
    dynamicBatching: batching === undefined ? undefined : {
      maxQueueDelayUs: Number(batching.max_queue_delay_microseconds ?? 0),
      preferredBatchSizes: (batching.preferred_batch_size ?? []).map(Number),
    },
  };
}

/**
 * The form that decides behaviour: with a max batch size of 1 the batcher sends every request at once, so its
 * delay and preferred sizes make no difference and are dropped. Equal canonical settings measure the same.
 */
export function canonicalSettings(settings: TunedSettings): TunedSettings {
  if (settings.maxBatchSize > 1 || settings.dynamicBatching === undefined) return settings;
  return { ...settings, dynamicBatching: { maxQueueDelayUs: 0, preferredBatchSizes: [] } };
}

/** A string equal for settings that behave the same (see {@link canonicalSettings}). */
export function settingsKey(settings: TunedSettings): string {
  const s = canonicalSettings(settings);
  const device = s.device.kind === "KIND_GPU" ? `gpu:${s.device.accelerator}` : "cpu";
  const batching = s.dynamicBatching === undefined ? "none" : `${s.dynamicBatching.maxQueueDelayUs}/${s.dynamicBatching.preferredBatchSizes.join("+")}`;
  return `${device}|${s.instanceCount}|${s.intraOpThreads ?? "-"}|${s.maxBatchSize}|${batching}`;
}

/** One line for progress and tables, e.g. `2 x CPU (1 thread), max batch 8, delay 500 us`. */
export function describeSettings(settings: TunedSettings): string {
  const s = canonicalSettings(settings);
  const device = s.device.kind === "KIND_GPU" ? `GPU/${s.device.accelerator}` : "CPU";
  const threads = s.intraOpThreads === undefined ? "" : ` (${s.intraOpThreads} thread${s.intraOpThreads === 1 ? "" : "s"})`;
  const parts = [`${s.instanceCount} x ${device}${threads}`];
  if (s.maxBatchSize > 0) parts.push(`max batch ${s.maxBatchSize}`);
  if (s.maxBatchSize > 1) {
    if (s.dynamicBatching === undefined) parts.push("no dynamic batching");
    else {
      parts.push(`delay ${s.dynamicBatching.maxQueueDelayUs} us`);
      if (s.dynamicBatching.preferredBatchSizes.length > 0) parts.push(`preferred ${s.dynamicBatching.preferredBatchSizes.join(",")}`);
    }
  }
  return parts.join(", ");
}

/**
 * Model Analyzer's load for a configuration: twice the requests the server can batch at once over all instances
 * (2 x instances x max batch size), so one batch per instance is always queued while another runs; capped at
 * `maxConcurrency`.
 */
export function defaultConcurrency(settings: TunedSettings, maxConcurrency: number): number {
  return Math.max(1, Math.min(maxConcurrency, 2 * settings.instanceCount * Math.max(1, settings.maxBatchSize)));
}

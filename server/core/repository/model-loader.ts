import { existsSync } from "node:fs";
import path from "node:path";
import type { Backend, BackendInstance, InstanceSpec } from "../../backends/backend";
import { completeConfig } from "../model-config/auto-complete";
import { type ComposingModels, EnsembleScheduler, planEnsemble } from "../scheduling/ensemble";
import { dataTypeFromConfig } from "../../../protocol/datatypes";
import type { ModelConfig, ModelInput, ModelOutput, ModelQueuePolicy } from "../model-config/model-config";
import { modelConfigFromJson, modelConfigToJson } from "../model-config/model-config";
import { validateModelConfig } from "../model-config/validate";
import { listVersions, type ModelDirectory, readLabels, resolveInsideModel, type SymlinkPolicy } from "./model-repository";
import type { ModelSignature, TensorSignature } from "../model-config/model-signature";
import { ModelStatistics } from "./model-statistics";
import { buildWarmupSamples, warmUpInstances } from "./model-warmup";
import { InstancePool, type InstanceRestarts } from "../scheduling/instance-pool";
import { type QueuePolicy, Scheduler, type SchedulerSettings } from "../scheduling/scheduler";
import { controlInputsOf, SequenceTracker } from "../scheduling/sequence-control";
import type { InstancePlacement, ModelVersion } from "./model-version";

export interface LoaderSettings {
  readonly autoCompleteConfig: boolean;
  /** Backends by name (`onnxruntime`, `identity`). */
  readonly backends: ReadonlyMap<string, Backend>;
  readonly gpuCount: number;
  readonly cpuCount: number;
  readonly defaultMaxBatchSize: number;
  /** Intra-op threads per instance; undefined sizes them to the cores and the model's instance count. */
  readonly intraOpThreads: number | undefined;
  readonly observer: { executed(modelName: string, version: number, timings: Parameters<ModelStatistics["recordExecution"]>[0]): void };
  /** The loaded models an ensemble's steps run on. */
  readonly composing: ComposingModels;
  /** Backoff for replacing an instance whose worker died: starts at `initialBackoffMs`, doubles up to `maxBackoffMs`. */
  readonly instanceRestart: { readonly initialBackoffMs: number; readonly maxBackoffMs: number };
  /** Where loads report which device and provider each version's instances run on, KIND_AUTO's CPU fallback and restarts. */
  readonly log: InstanceRestarts["log"];
  /** Where symlinks in model directories may lead (`--model-symlinks`); default `inside`. */
  readonly modelSymlinks?: SymlinkPolicy;
}

/** A model whose config could be read: what each of its selected versions became. */
export interface LoadedModel {
  readonly name: string;
  readonly versions: ReadonlyMap<number, ModelVersion | Error>;
}

const ONNX_PLATFORM = "onnxruntime_onnx";
export const ENSEMBLE_PLATFORM = "ensemble";

function resolveBackend(config: ModelConfig, directory: ModelDirectory, versions: readonly number[]): string {
  if (config.platform === ONNX_PLATFORM || config.backend === "onnxruntime") {
    config.platform = ONNX_PLATFORM;
    config.backend = "onnxruntime";
    return "onnxruntime";
  }
  if (config.platform === "" && config.backend === "") {
    const filename = modelFilename(config, undefined);
    if (versions.some((v) => existsSync(modelFilePath(directory, v, filename)))) {
      config.platform = ONNX_PLATFORM;
      config.backend = "onnxruntime";
      return "onnxruntime";
    }
    throw new Error(`unable to determine the backend: set platform or backend in config.pbtxt, or provide ${filename} in a version directory`);
  }
  return config.backend || config.platform;
}

/** The model file's name: the config's `default_model_filename`, else the backend's own default, else `model.onnx`. */
function modelFilename(config: ModelConfig, backend: Backend | undefined): string {
  return config.default_model_filename || backend?.defaultModelFilename || "model.onnx";
}

/** `<model>/<version>/<default_model_filename>`, refused when it resolves outside the model directory. */
function modelFilePath(directory: ModelDirectory, version: number, filename: string): string {
  return resolveInsideModel(directory.path, path.join(String(version), filename), `model file '${version}/${filename}' (default_model_filename)`, directory.symlinks);
}

function selectVersions(config: ModelConfig, available: readonly number[]): number[] {
  const policy = config.version_policy;
  if (policy?.all !== undefined) return [...available];
  if (policy?.specific !== undefined) {
    const wanted = policy.specific.versions.map(Number);
    const missing = wanted.filter((v) => !available.includes(v));
    if (missing.length > 0) throw new Error(`version_policy names version(s) ${missing.join(", ")} that have no directory`);
    return wanted.sort((a, b) => a - b);
  }
  const latest = Math.max(1, policy?.latest?.num_versions ?? 1);
  return available.slice(-latest);
}

interface InstancePlan {
  readonly kind: "cpu" | "gpu";
  readonly deviceId: number;
  readonly groupName: string;
  /** From a KIND_AUTO group placed on the GPU: when the GPU turns out unusable, the version loads on CPU instead. */
  readonly auto: boolean;
}

/**
 * Expands instance_group into one plan per instance, filling Triton's defaults into the config as it goes.
 * KIND_AUTO means the GPU when `autoOnGpu`, else the CPU. A KIND_GPU group without `gpus` gets its instances on
 * every GPU, or only on GPU 0 where `firstGpuOnly` (the backend's provider cannot address the others):
 * `narrowed` tells whether that held any group to GPU 0 of several.
 */
function planInstances(
  config: ModelConfig, backendName: string, gpuCount: number, autoOnGpu: boolean, firstGpuOnly: boolean,
): { plans: InstancePlan[]; narrowed: boolean } {
  if (config.instance_group.length === 0) {
    config.instance_group = [{ name: "", kind: "KIND_AUTO", count: 0, gpus: [], profile: [], passive: false, host_policy: "", secondary_devices: [] }] as unknown as ModelConfig["instance_group"];
  }
  const plans: InstancePlan[] = [];
  let narrowed = false;
  config.instance_group.forEach((group, index) => {
    const auto = group.kind === "KIND_AUTO" && autoOnGpu;
    if (group.kind === "KIND_AUTO") group.kind = autoOnGpu ? "KIND_GPU" : "KIND_CPU";
    if (group.kind === "KIND_MODEL") group.kind = "KIND_CPU";
    if (group.name === "") group.name = `${config.name}_${index}`;
    if (group.count <= 0) group.count = group.kind === "KIND_CPU" && backendName === "onnxruntime" ? 2 : 1;
    if (group.kind === "KIND_GPU") {
      if (group.gpus.length === 0) {
        narrowed ||= firstGpuOnly && gpuCount > 1;
        group.gpus = gpuCount > 0 && !firstGpuOnly ? Array.from({ length: gpuCount }, (_, i) => i) : [0];
      }
      const gpus = group.gpus;
      for (const gpu of gpus) for (let i = 0; i < group.count; i++) plans.push({ kind: "gpu", deviceId: gpu, groupName: group.name, auto });
    } else {
      for (let i = 0; i < group.count; i++) plans.push({ kind: "cpu", deviceId: 0, groupName: group.name, auto: false });
    }
  });
  return { plans, narrowed };
}

/** A KIND_AUTO instance that could not start on the GPU. */
class AutoGpuUnusable extends Error {}

function acceleratorsFor(config: ModelConfig, kind: "cpu" | "gpu"): InstanceSpec["accelerators"] {
  const accelerators = config.optimization?.execution_accelerators;
  const list = kind === "gpu" ? accelerators?.gpu_execution_accelerator : accelerators?.cpu_execution_accelerator;
  return (list ?? []).map((a) => ({ name: a.name, parameters: { ...a.parameters } }));
}

function parameterStrings(config: ModelConfig): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(config.parameters)) out[key] = value.string_value;
  return out;
}

function tensorSignature(directory: ModelDirectory, tensor: ModelInput | ModelOutput, optional: boolean): TensorSignature {
  const datatype = dataTypeFromConfig(tensor.data_type);
  if (datatype === undefined) throw new Error(`tensor '${tensor.name}' has no valid data_type`);
  const labelFilename = "label_filename" in tensor ? tensor.label_filename : "";
  return {
    name: tensor.name, datatype, dims: tensor.dims.map(Number), optional,
    reshape: tensor.reshape !== undefined ? tensor.reshape.shape.map(Number) : undefined,
    labels: labelFilename ? readLabels(directory, labelFilename) : undefined,
  };
}

function queuePolicy(policy: ModelQueuePolicy | undefined): QueuePolicy {
  return {
    timeoutAction: policy?.timeout_action === "DELAY" ? "DELAY" : "REJECT",
    defaultTimeoutUs: policy?.default_timeout_microseconds ?? 0,
    allowTimeoutOverride: policy?.allow_timeout_override ?? false,
    maxQueueSize: policy?.max_queue_size ?? 0,
  };
}

/** Triton's scheduler choice: the dynamic batcher when configured, else one request per execution. */
function schedulerSettings(config: ModelConfig): SchedulerSettings {
  const sequence = config.sequence_batching;
  if (sequence !== undefined) {
    // Different sequences batch together; one sequence's requests never share a batch (the tracker orders them).
    const strategy = sequence.oldest ?? sequence.direct;
    return {
      batch: {
        maxBatchSize: Math.max(1, config.max_batch_size),
        preferredBatchSizes: sequence.oldest?.preferred_batch_size.map(Number) ?? [],
        maxQueueDelayUs: strategy?.max_queue_delay_microseconds ?? 0,
      },
      levels: [queuePolicy(undefined)], defaultLevel: 1, preserveOrdering: sequence.oldest?.preserve_ordering ?? false,
    };
  }
  const batching = config.dynamic_batching;
  if (batching === undefined) {
    return { batch: { maxBatchSize: 1, preferredBatchSizes: [], maxQueueDelayUs: 0 }, levels: [queuePolicy(undefined)], defaultLevel: 1, preserveOrdering: false };
  }
  const levelCount = Math.max(1, batching.priority_levels);
  const defaultLevel = batching.priority_levels > 0 ? batching.default_priority_level : 1;
  if (defaultLevel < 1 || defaultLevel > levelCount) {
    throw new Error(`default_priority_level ${batching.default_priority_level} must be between 1 and priority_levels ${batching.priority_levels}`);
  }
  const levels = Array.from({ length: levelCount }, (_, i) => queuePolicy(batching.priority_queue_policy[String(i + 1)] ?? batching.default_queue_policy));
  return {
    batch: {
      maxBatchSize: Math.max(1, config.max_batch_size),
      preferredBatchSizes: batching.preferred_batch_size.map(Number),
      maxQueueDelayUs: batching.max_queue_delay_microseconds,
    },
    levels, defaultLevel, preserveOrdering: batching.preserve_ordering,
  };
}

/** A version's instances as created, where each runs, and the spec each slot's instance is (re)created from. */
interface CreatedInstances {
  readonly instances: BackendInstance[];
  readonly placements: InstancePlacement[];
  readonly specOf: (index: number) => InstanceSpec;
}

/** Creates every planned instance of a version; closes the ones already created when one fails. */
async function createInstances(
  config: ModelConfig, directory: ModelDirectory, backend: Backend, version: number, modelPath: string, settings: LoaderSettings, autoOnGpu: boolean,
): Promise<CreatedInstances> {
  const firstGpuOnly = settings.gpuCount > 1 ? backend.firstGpuOnly?.(acceleratorsFor(config, "gpu")) : undefined;
  const { plans, narrowed } = planInstances(config, backend.name, settings.gpuCount, autoOnGpu, firstGpuOnly !== undefined);
  const intraOpThreads = settings.intraOpThreads ?? Math.max(1, Math.floor(settings.cpuCount / plans.length));
  const modelConfig = modelConfigToJson(config);
  const specOf = (index: number): InstanceSpec => {
    const plan = plans[index]!;
    return {
      modelName: config.name, modelVersion: version, modelPath, modelDirectory: directory.path, modelConfig,
      instanceName: `${plan.groupName}_${index}`, device: plan.kind, deviceId: plan.deviceId,
      accelerators: acceleratorsFor(config, plan.kind), parameters: parameterStrings(config), intraOpThreads,
      graphOptimizationLevel: config.optimization?.graph?.level ?? 0,
    };
  };
  const instances: BackendInstance[] = [];
  try {
    for (const [index, plan] of plans.entries()) {
      try {
        instances.push(await backend.createInstance(specOf(index)));
      } catch (error) {
        throw plan.auto ? new AutoGpuUnusable(error instanceof Error ? error.message : String(error)) : error;
      }
    }
  } catch (error) {
    await Promise.allSettled(instances.map((i) => i.close()));
    throw error;
  }
  const placements = instances.map((instance, i): InstancePlacement => ({
    kind: plans[i]!.kind === "gpu" ? "KIND_GPU" : "KIND_CPU", deviceId: plans[i]!.deviceId, provider: instance.executionProvider,
  }));
  if (narrowed) {
    settings.log.warn(`model '${config.name}' version ${version}: KIND_GPU instances run on GPU 0 only, not on each of the ${settings.gpuCount} GPUs: ${firstGpuOnly}`);
  }
  return { instances, placements, specOf };
}

/**
 * Shows which provider GPU instances landed on where the config named none (KIND_GPU picks one by itself), in
 * Triton's own field for it, so `GET .../config` answers which accelerator serves the model.
 */
function recordGpuProvider(config: ModelConfig, placements: readonly InstancePlacement[]): void {
  const provider = placements.find((p) => p.kind === "KIND_GPU" && p.provider !== "cpu")?.provider;
  if (provider === undefined || (config.optimization?.execution_accelerators?.gpu_execution_accelerator.length ?? 0) > 0) return;
  const named = modelConfigFromJson({ optimization: { execution_accelerators: { gpu_execution_accelerator: [{ name: provider }] } } }, "execution provider");
  if (config.optimization === undefined) config.optimization = named.optimization;
  else config.optimization.execution_accelerators = named.optimization!.execution_accelerators;
}

/** `2 x KIND_CPU on cpu, 1 x KIND_GPU on webgpu (device 0)`. */
function describePlacements(placements: readonly InstancePlacement[]): string {
  const counts = new Map<string, number>();
  for (const p of placements) {
    const key = `${p.kind} on ${p.provider}${p.kind === "KIND_GPU" ? ` (device ${p.deviceId})` : ""}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([key, count]) => `${count} x ${key}`).join(", ");
}

async function loadVersion(
  directory: ModelDirectory, baseConfig: ModelConfig, backend: Backend, version: number, settings: LoaderSettings,
): Promise<ModelVersion> {
  let config: ModelConfig = structuredClone(baseConfig);
  const modelPath = modelFilePath(directory, version, modelFilename(config, backend));
  if (backend.name === "onnxruntime" && !existsSync(modelPath)) throw new Error(`model file ${modelPath} not found`);
  const autoOnGpu = settings.gpuCount > 0 && backend.usesGpu;
  let created: CreatedInstances;
  try {
    created = await createInstances(config, directory, backend, version, modelPath, settings, autoOnGpu);
  } catch (error) {
    if (!(error instanceof AutoGpuUnusable)) throw error;
    // Triton's KIND_AUTO: the GPU when the model can use it, else the CPU; a machine's GPU never fails a load.
    settings.log.warn(`model '${config.name}' version ${version}: KIND_AUTO instances cannot use the GPU, loading them on CPU: ${error.message}`);
    config = structuredClone(baseConfig);
    created = await createInstances(config, directory, backend, version, modelPath, settings, false);
  }
  const { instances, placements, specOf } = created;
  try {
    recordGpuProvider(config, placements);
    settings.log.info(`model '${config.name}' version ${version}: ${describePlacements(placements)}`);
    const controls = controlInputsOf(config);
    const completed = completeConfig(
      config, instances[0]?.io, { enabled: settings.autoCompleteConfig, defaultMaxBatchSize: settings.defaultMaxBatchSize },
      controls.map((c) => c.name),
    );
    const signature: ModelSignature = {
      inputProblem: backend.inputProblem?.bind(backend),
      maxBatchSize: completed.max_batch_size,
      inputs: completed.input.map((t) => tensorSignature(directory, t, t.optional)),
      outputs: completed.output.map((t) => tensorSignature(directory, t, false)),
      controls: controls.map((c) => ({ name: c.name, datatype: c.datatype })),
    };
    // Not ready, and not counted in statistics, until every instance has run every warmup sample.
    const warmupSamples = buildWarmupSamples(config.name, directory, completed.model_warmup, signature);
    await warmUpInstances(warmupSamples, instances, signature);
    const sequences = completed.sequence_batching !== undefined
      ? new SequenceTracker(config.name, controls, completed.sequence_batching.max_sequence_idle_microseconds)
      : undefined;
    const statistics = new ModelStatistics(config.name, String(version));
    // A replacement for a dead instance starts and warms up exactly as the first one did.
    const pool = new InstancePool(instances, {
      ...settings.instanceRestart, log: settings.log,
      describe: (index) => `instance ${specOf(index).instanceName} of model '${config.name}' version ${version}`,
      start: async (index) => {
        const instance = await backend.createInstance(specOf(index));
        try {
          await warmUpInstances(warmupSamples, [instance], signature);
        } catch (error) {
          await instance.close();
          throw error;
        }
        return instance;
      },
    });
    const scheduler = new Scheduler(signature, schedulerSettings(completed), pool, {
      executed: (timings) => {
        statistics.recordExecution(timings);
        settings.observer.executed(config.name, version, timings);
      },
    });
    return { name: config.name, version, config: completed, signature, pool, placements, scheduler, statistics, sequences };
  } catch (error) {
    await Promise.allSettled(instances.map((i) => i.close()));
    throw error;
  }
}

/** Each version the policy selects, or the Error that kept it from loading (the others still load). */
async function loadVersions(
  config: ModelConfig, available: readonly number[], load: (version: number) => Promise<ModelVersion>,
): Promise<Map<number, ModelVersion | Error>> {
  const versions = new Map<number, ModelVersion | Error>();
  for (const version of selectVersions(config, available)) {
    try {
      versions.set(version, await load(version));
    } catch (error) {
      versions.set(version, error instanceof Error ? error : new Error(String(error)));
    }
  }
  return versions;
}

/** An ensemble version: no instances of its own; requests run through the composing models' schedulers. */
function loadEnsembleVersion(directory: ModelDirectory, baseConfig: ModelConfig, version: number, settings: LoaderSettings): ModelVersion {
  const config: ModelConfig = structuredClone(baseConfig);
  if (config.input.length === 0 || config.output.length === 0) throw new Error("an ensemble config must declare its inputs and outputs (nothing to auto-complete them from)");
  const signature: ModelSignature = {
    maxBatchSize: config.max_batch_size,
    inputs: config.input.map((t) => tensorSignature(directory, t, t.optional)),
    outputs: config.output.map((t) => tensorSignature(directory, t, false)),
    controls: [],
  };
  const steps = planEnsemble(config, signature, settings.composing);
  return {
    name: config.name, version, config, signature, pool: new InstancePool([]),
    placements: [], scheduler: new EnsembleScheduler(steps, settings.composing),
    statistics: new ModelStatistics(config.name, String(version)), sequences: undefined,
  };
}

/**
 * Loads every selected version of one model directory with its config (read by the caller, named after the
 * directory). Throws when the model as a whole is unusable (unknown backend, no versions); a version that fails
 * on its own is returned as its Error.
 */
export async function loadModel(directory: ModelDirectory, config: ModelConfig, settings: LoaderSettings): Promise<LoadedModel> {
  if (directory.problem !== undefined) throw new Error(directory.problem);
  validateModelConfig(config);
  const available = listVersions(directory.path);
  if (available.length === 0) throw new Error("no numeric version directory found (e.g. 1/)");
  if (config.platform === ENSEMBLE_PLATFORM) {
    return { name: directory.name, versions: await loadVersions(config, available, async (version) => loadEnsembleVersion(directory, config, version, settings)) };
  }
  const backendName = resolveBackend(config, directory, available);
  const backend = settings.backends.get(backendName);
  if (backend === undefined) {
    throw new Error(`backend '${backendName}' is not supported by this server (supported: ${[...settings.backends.keys()].join(", ")})`);
  }
  return { name: directory.name, versions: await loadVersions(config, available, (version) => loadVersion(directory, config, backend, version, settings)) };
}

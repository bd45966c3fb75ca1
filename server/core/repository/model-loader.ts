import { existsSync } from "node:fs";
import path from "node:path";
import type { Backend } from "../../backends/backend";
import { completeConfig } from "../model-config/auto-complete";
import { type ComposingModels, EnsembleScheduler, planEnsemble } from "../scheduling/ensemble";
import { withStepLabels } from "../scheduling/ensemble-labels";
import { dataTypeFromConfig } from "../../../protocol/datatypes";
import type { ModelConfig, ModelInput, ModelOutput } from "../model-config/model-config";
import { normalizeBackendFields, withTritonDefaults } from "../model-config/normalize";
import { validatePlatformBackendPair } from "../model-config/validate";
import { ENSEMBLE_PLATFORM } from "../model-config/validate-ensemble";
import { validateModelIoConfig } from "../model-config/validate-io";
import { listVersions, type ModelDirectory, readLabels, resolveInsideModel, type SymlinkPolicy } from "./model-repository";
import type { ModelSignature, TensorSignature } from "../model-config/model-signature";
import { ModelStatistics } from "./model-statistics";
import { buildWarmupSamples, warmUpInstances } from "./model-warmup";
import { InstancePool } from "../scheduling/instance-pool";
import type { ModelCalls } from "../scheduling/model-calls";
import { Scheduler, type SchedulerListener } from "../scheduling/scheduler";
import { schedulerSettings, sequenceBatcherSettings } from "./scheduler-settings";
import { SequenceBatcher } from "../scheduling/sequence-batcher";
import { controlInputsOf } from "../scheduling/sequence-control";
import { stateSpecsOf } from "../scheduling/sequence-state";
import type { ModelVersion } from "./model-version";
import { AutoGpuUnusable, type CreatedInstances, createInstances, describePlacements, type InstanceSettings, withGpuProvider } from "./version-instances";

export interface LoaderSettings extends InstanceSettings {
  readonly autoCompleteConfig: boolean;
  /** Backends by the name a config's `backend` gives. */
  readonly backends: ReadonlyMap<string, Backend>;
  readonly defaultMaxBatchSize: number;
  readonly observer: { executed(modelName: string, version: number, timings: Parameters<ModelStatistics["recordExecution"]>[0]): void };
  /** The loaded models an ensemble's steps run on. */
  readonly composing: ComposingModels;
  /** Where a model's calls to other models (BLS) go. */
  readonly modelCalls: ModelCalls;
  /** Backoff for replacing an instance whose worker died: starts at `initialBackoffMs`, doubles up to `maxBackoffMs`. */
  readonly instanceRestart: { readonly initialBackoffMs: number; readonly maxBackoffMs: number };
  /** Where symlinks in model directories may lead (`--model-symlinks`); default `inside`. */
  readonly modelSymlinks?: SymlinkPolicy;
}

/** A model whose config could be read: what each of its selected versions became. */
export interface LoadedModel {
  readonly name: string;
  readonly versions: ReadonlyMap<number, ModelVersion | Error>;
}

/**
 * The backend a config loads on: the one serving its platform, else the one whose model file its
 * `default_model_filename` names (refused, as in Triton, when the platform names another), else the one it names
 * (by `backend`, or by `platform` for a backend that declares none). A config naming neither loads on a backend that
 * recognizes a model file in one of its version folders, else, as Triton's last resort (core
 * src/model_config_utils.cc, AutoCompleteBackendFields), on the backend its model name ends with
 * (`<name>.<backend>`). Throws with Triton's reason when the name has no such ending; undefined backend when the
 * named one is not here.
 */
function resolveBackend(
  config: ModelConfig, directory: ModelDirectory, versions: readonly number[], backends: ReadonlyMap<string, Backend>,
): { name: string; backend: Backend | undefined } {
  const serving = config.platform === "" ? undefined : [...backends.values()].find((b) => b.platforms?.includes(config.platform));
  if (serving !== undefined) return { name: serving.name, backend: serving };
  // Triton's auto-complete takes the backend from its model file name in `default_model_filename`, whatever the
  // platform says; the pair is checked once the backend is known.
  const byFilename = config.backend === "" && config.default_model_filename !== ""
    ? [...backends.values()].find((b) => b.recognizedByModelFile === true && b.defaultModelFilename === config.default_model_filename)
    : undefined;
  if (byFilename !== undefined) {
    validatePlatformBackendPair({ platform: config.platform, backend: byFilename.name });
    return { name: byFilename.name, backend: byFilename };
  }
  if (config.platform === "" && config.backend === "") {
    const recognizing = [...backends.values()].filter((b) => b.recognizedByModelFile === true);
    const recognized = recognizing.find((b) => versions.some((v) => existsSync(modelFilePath(directory, v, modelFilename(config, b)))));
    if (recognized !== undefined) return { name: recognized.name, backend: recognized };
    const dot = config.name.indexOf(".");
    if (dot < 0) {
      throw new Error(
        `Invalid model name: Could not determine backend for model '${config.name}' with no backend in model configuration. ` +
        "Expected model name of the form 'model.<backend_name>'.",
      );
    }
    const named = config.name.slice(dot + 1);
    return { name: named, backend: backends.get(named) };
  }
  const name = config.backend || config.platform;
  return { name, backend: backends.get(name) };
}

/** The model file's name: the config's `default_model_filename`, else the backend's own default, else none (the version folder). */
function modelFilename(config: ModelConfig, backend: Backend): string {
  return config.default_model_filename || backend.defaultModelFilename || "";
}

/** `<model>/<version>/<default_model_filename>` (the version folder without a filename), refused when it resolves outside the model directory. */
function modelFilePath(directory: ModelDirectory, version: number, filename: string): string {
  const what = filename === "" ? `version directory '${version}'` : `model file '${version}/${filename}' (default_model_filename)`;
  return resolveInsideModel(directory.path, path.join(String(version), filename), what, directory.symlinks);
}

/**
 * The versions the policy loads, Triton's VersionsToLoad (core src/model_repository_manager/): of `specific`
 * versions only those with a directory (each missing one is logged); none at all fails the model with Triton's
 * message.
 */
function selectVersions(config: ModelConfig, available: readonly number[], log: LoaderSettings["log"]): number[] {
  const policy = config.version_policy;
  let selected: number[];
  if (policy?.all !== undefined) {
    selected = [...available];
  } else if (policy?.specific !== undefined) {
    const wanted = [...new Set(policy.specific.versions.map(Number))].sort((a, b) => a - b);
    for (const version of wanted.filter((v) => !available.includes(v))) {
      log.warn(`version ${version} is specified for model '${config.name}', but the version directory is not present`);
    }
    selected = wanted.filter((v) => available.includes(v));
  } else {
    selected = available.slice(-Math.max(1, policy?.latest?.num_versions ?? 1));
  }
  if (selected.length === 0) throw new Error(`at least one version must be available under the version policy of model '${config.name}'`);
  return selected;
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

async function loadVersion(
  directory: ModelDirectory, baseConfig: ModelConfig, backend: Backend, version: number, settings: LoaderSettings,
): Promise<ModelVersion> {
  // Triton's Model::Init; with auto-complete off the repository manager has made this check already.
  validateModelIoConfig(baseConfig);
  if (baseConfig.model_transaction_policy?.decoupled === true && backend.servesDecoupled !== true) {
    throw new Error(`backend '${backend.name}' cannot serve a decoupled model (model_transaction_policy { decoupled: true }): its executions answer each request once`);
  }
  const modelPath = modelFilePath(directory, version, modelFilename(baseConfig, backend));
  const autoOnGpu = settings.gpuCount > 0 && backend.usesGpu;
  let created: CreatedInstances;
  try {
    created = await createInstances(baseConfig, directory, backend, version, modelPath, settings, autoOnGpu);
  } catch (error) {
    if (!(error instanceof AutoGpuUnusable)) throw error;
    // Triton's KIND_AUTO: the GPU when the model can use it, else the CPU; a machine's GPU never fails a load.
    settings.log.warn(`model '${baseConfig.name}' version ${version}: KIND_AUTO instances cannot use the GPU, loading them on CPU: ${error.message}`);
    created = await createInstances(baseConfig, directory, backend, version, modelPath, settings, false);
  }
  const { instances, placements, specOf } = created;
  try {
    const config = withGpuProvider(created.config, placements);
    settings.log.info(`model '${config.name}' version ${version}: ${describePlacements(placements)}`);
    const controls = controlInputsOf(config);
    const states = stateSpecsOf(config, (relative) => resolveInsideModel(directory.path, relative, `initial_state file '${relative}'`, directory.symlinks));
    const completed = withTritonDefaults(completeConfig(
      config, instances[0]?.io, { enabled: settings.autoCompleteConfig, defaultMaxBatchSize: settings.defaultMaxBatchSize },
      { inputs: [...controls.map((c) => c.name), ...states.map((s) => s.inputName)], outputs: states.map((s) => s.outputName) },
    ), modelFilename(config, backend));
    const signature: ModelSignature = {
      inputProblem: backend.inputProblem?.bind(backend),
      maxBatchSize: completed.max_batch_size,
      inputs: completed.input.map((t) => tensorSignature(directory, t, t.optional)),
      outputs: completed.output.map((t) => tensorSignature(directory, t, false)),
      controls: [...controls.map((c) => ({ name: c.name, datatype: c.datatype })), ...states.map((s) => ({ name: s.inputName, datatype: s.datatype }))],
    };
    // Not ready, and not counted in statistics, until every instance has run every warmup sample.
    const warmupSamples = buildWarmupSamples(config.name, directory, completed.model_warmup, signature);
    await warmUpInstances(warmupSamples, instances, signature);
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
    const listener: SchedulerListener = {
      executed: (timings) => {
        statistics.recordExecution(timings);
        settings.observer.executed(config.name, version, timings);
      },
      callerFor: (origin) => settings.modelCalls.callerFor(origin, { modelName: config.name, modelVersion: version }),
    };
    const sequenceBatching = completed.sequence_batching;
    const scheduler = sequenceBatching !== undefined
      ? new SequenceBatcher(config.name, signature, sequenceBatcherSettings({ ...completed, sequence_batching: sequenceBatching }, controls, states), pool, listener)
      : new Scheduler(signature, schedulerSettings(completed), pool, listener);
    return { name: config.name, version, config: completed, signature, pool, placements, scheduler, statistics };
  } catch (error) {
    await Promise.allSettled(instances.map((i) => i.close()));
    throw error;
  }
}

/** Each version the policy selects, or the Error that kept it from loading (the others still load). */
async function loadVersions(selected: readonly number[], load: (version: number) => Promise<ModelVersion>): Promise<Map<number, ModelVersion | Error>> {
  const versions = new Map<number, ModelVersion | Error>();
  for (const version of selected) {
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
  validateModelIoConfig(baseConfig);
  const config: ModelConfig = withTritonDefaults(structuredClone(baseConfig), undefined);
  const ownSignature: ModelSignature = {
    maxBatchSize: config.max_batch_size,
    inputs: config.input.map((t) => tensorSignature(directory, t, t.optional)),
    outputs: config.output.map((t) => tensorSignature(directory, t, false)),
    controls: [],
  };
  const steps = planEnsemble(config, ownSignature, settings.composing);
  const signature = withStepLabels(config, ownSignature, settings.composing);
  const statistics = new ModelStatistics(config.name, String(version));
  const scheduler = new EnsembleScheduler(config.name, steps, signature, settings.composing, (timings) => {
    statistics.recordExecution(timings);
    settings.observer.executed(config.name, version, timings);
  });
  return { name: config.name, version, config, signature, pool: new InstancePool([]), placements: [], scheduler, statistics };
}

/**
 * Loads every selected version of one model directory with its config (read, named after the directory and
 * checked by the caller: model-source.ts). Throws when the model as a whole is unusable (unknown backend, no
 * versions); a version that fails on its own is returned as its Error.
 */
export async function loadModel(directory: ModelDirectory, config: ModelConfig, settings: LoaderSettings): Promise<LoadedModel> {
  if (directory.problem !== undefined) throw new Error(directory.problem);
  // Triton's order (core src/model_repository_manager/): the backend from the config or the version folders' files,
  // and only then the versions the policy selects.
  const available = listVersions(directory.path);
  const resolved = config.platform === ENSEMBLE_PLATFORM ? undefined : resolveBackend(config, directory, available, settings.backends);
  const selected = selectVersions(config, available, settings.log);
  if (resolved === undefined) {
    return { name: directory.name, versions: await loadVersions(selected, async (version) => loadEnsembleVersion(directory, config, version, settings)) };
  }
  const { name: backendName, backend } = resolved;
  if (backend === undefined) {
    throw new Error(`backend '${backendName}' is not supported by this server (supported: ${[...settings.backends.keys()].join(", ")})`);
  }
  const normalized = normalizeBackendFields(config, backend);
  return { name: directory.name, versions: await loadVersions(selected, (version) => loadVersion(directory, normalized, backend, version, settings)) };
}

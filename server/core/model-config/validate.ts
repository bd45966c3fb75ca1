import type { ModelConfig, ModelDynamicBatching } from "./model-config";
import { ENSEMBLE_PLATFORM, validateEnsembleScheduling } from "./validate-ensemble";
import { validateSequenceControls } from "./validate-sequence-controls";

/** Triton's backends that serve named platforms (GetBackendType / GetBackendTypeFromPlatform, core src/constants.h). */
const BACKEND_PLATFORMS: Readonly<Record<string, readonly string[]>> = {
  tensorrt: ["tensorrt_plan"],
  tensorflow: ["tensorflow_graphdef", "tensorflow_savedmodel"],
  onnxruntime: ["onnxruntime_onnx"],
  pytorch: ["pytorch_libtorch"],
};

/**
 * Triton's check that `platform` and `backend` name the same backend, for the backends Triton knows by platform; an
 * empty platform is one Triton's auto-complete fills from the backend before it validates.
 */
export function validatePlatformBackendPair(config: Pick<ModelConfig, "platform" | "backend">): void {
  const platforms = BACKEND_PLATFORMS[config.backend];
  if (platforms !== undefined && config.platform !== "" && !platforms.includes(config.platform)) {
    throw new Error(`unexpected 'platform' and 'backend' pair, got:${config.platform}, ${config.backend}`);
  }
}

function checkPlatform(config: ModelConfig): void {
  if (config.backend !== "" && config.platform === ENSEMBLE_PLATFORM) {
    throw new Error(`Ensemble model '${config.name}' must have platform type '${ENSEMBLE_PLATFORM}' and empty backend type`);
  }
  validatePlatformBackendPair(config);
}

function checkDynamicBatching(config: ModelConfig, batching: ModelDynamicBatching): void {
  for (const size of batching.preferred_batch_size.map(Number)) {
    if (size <= 0) throw new Error(`dynamic batching preferred size must be positive for ${config.name}`);
    if (size > config.max_batch_size) throw new Error(`dynamic batching preferred size must be <= max batch size for ${config.name}`);
  }
  const levels = batching.priority_levels;
  if (levels !== 0 && (batching.default_priority_level === 0 || batching.default_priority_level > levels)) {
    throw new Error(`default priority level must be in range [1, ${levels}] for ${config.name}`);
  }
  if (levels !== 0 && Object.keys(batching.priority_queue_policy).some((level) => Number(level) === 0 || Number(level) > levels)) {
    throw new Error(`priority queue policy must have priority level in range [1, ${levels}] for ${config.name}`);
  }
  if (!batching.preserve_ordering) return;
  // Priorities and delayed requests would reorder responses.
  if (levels > 1) throw new Error(`Only one priority level is allowed when 'preserve_ordering' is true for ${config.name}`);
  const policies = [batching.default_queue_policy, ...Object.values(batching.priority_queue_policy)];
  if (policies.some((policy) => policy !== undefined && policy.default_timeout_microseconds !== 0 && policy.timeout_action === "DELAY")) {
    throw new Error(`Queue policy can not have DELAY as timeout action when 'preserve_ordering' is true for ${config.name}`);
  }
}

function checkSequenceBatching(config: ModelConfig, batcher: NonNullable<ModelConfig["sequence_batching"]>): void {
  if (config.response_cache?.enable === true) {
    throw new Error(`Response Cache does not currently support model ${config.name} with sequence batching scheduler. Please disable the response cache.`);
  }
  validateSequenceControls(config, batcher);
  for (const size of batcher.oldest?.preferred_batch_size.map(Number) ?? []) {
    if (size <= 0) throw new Error(`sequence batching preferred batch size must be positive for ${config.name}`);
    if (size > config.max_batch_size) throw new Error(`sequence batching preferred batch size must be <= max batch size for ${config.name}`);
  }
  const utilization = batcher.direct?.minimum_slot_utilization;
  if (utilization !== undefined && (utilization < 0 || utilization > 1)) {
    throw new Error(`sequence batching minimum slot utilization must be in range (0.0, 1.0] for ${config.name}`);
  }
}

/** Triton's ValidateModelMetrics: each metric control names a metric family and gives histogram buckets. */
function checkModelMetrics(metrics: NonNullable<ModelConfig["model_metrics"]>): void {
  for (const control of metrics.metric_control) {
    if (control.metric_identifier === undefined) throw new Error("metric control must specify 'metric_identifier'");
    if (control.metric_identifier.family === "") throw new Error("metric identifier must specify non-empty 'family'");
    if (control.histogram_options === undefined) throw new Error("metric control must specify 'histogram_options'");
    if (control.histogram_options.buckets.length === 0) throw new Error("histogram options must specify non-empty 'buckets'");
  }
}

/**
 * Triton's ValidateModelConfig (core src/model_config_utils.cc), in its order and words: the checks it makes on a
 * config when the repository is polled, before it looks for version directories or model files, so that a bad
 * config is reported as itself rather than as a missing version. Throws with the reason, which makes the model
 * UNAVAILABLE. The inputs and outputs are ValidateModelIOConfig's (./validate-io.ts).
 */
export function validateModelConfig(config: ModelConfig): void {
  checkPlatform(config);
  if (config.max_batch_size < 0) throw new Error(`'max_batch_size' must be non-negative value for ${config.name}`);
  if (config.dynamic_batching !== undefined) checkDynamicBatching(config, config.dynamic_batching);
  if (config.sequence_batching !== undefined) checkSequenceBatching(config, config.sequence_batching);
  if (config.ensemble_scheduling !== undefined) validateEnsembleScheduling(config);
  else if (config.platform === ENSEMBLE_PLATFORM) {
    throw new Error(`ensemble scheduling must be set for ensemble ${config.name} whose platform is ${ENSEMBLE_PLATFORM}`);
  }
  if (config.model_transaction_policy?.decoupled === true && config.response_cache?.enable === true) {
    throw new Error(`Response Cache does not currently support model ${config.name} with 'decoupled' transaction policy. Please disable the response cache.`);
  }
  if (config.model_metrics !== undefined) checkModelMetrics(config.model_metrics);
  if (config.model_transaction_policy?.decoupled === true && config.sequence_batching !== undefined) {
    // Triton allows it; here a Direct batch's null requests have no stream to answer, so it is refused at load.
    throw new Error(`model '${config.name}': a decoupled model (model_transaction_policy { decoupled: true }) with sequence_batching is not supported by this server`);
  }
}

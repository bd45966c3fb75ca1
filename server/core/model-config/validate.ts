import type { ModelConfig, ModelInput, ModelOutput } from "./model-config";

/** Triton's wildcard: a dimension whose size each request chooses. */
const VARIABLE_DIM = -1;

function checkDims(owner: string, what: string, dims: readonly number[]): void {
  const bad = dims.find((dim) => !(Number(dim) >= 1 || Number(dim) === VARIABLE_DIM));
  if (bad !== undefined) {
    throw new Error(`${owner} has ${what} [${dims.join(",")}]: each dimension must be an integer >= 1, or -1 for a variable-size dimension (got ${bad})`);
  }
}

function checkTensor(kind: "input" | "output", tensor: ModelInput | ModelOutput): void {
  const owner = `${kind} '${tensor.name}'`;
  checkDims(owner, "dims", tensor.dims);
  if (tensor.reshape !== undefined) checkDims(owner, "reshape", tensor.reshape.shape);
}

/** Triton's checks of `dynamic_batching`, with its messages (core src/model_config_utils.cc, ValidateModelConfig). */
function checkDynamicBatching(config: ModelConfig): void {
  const batching = config.dynamic_batching;
  if (batching === undefined) return;
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
}

/**
 * The checks Triton makes on a parsed config before loading (ValidateModelConfig, when the repository is polled,
 * before it looks for version directories): values the text format accepts but no model can serve. Throws with
 * the reason, which makes the model UNAVAILABLE; without them a `dims: [ -5 ]` model would load READY and then
 * refuse every request.
 */
export function validateModelConfig(config: ModelConfig): void {
  if (config.max_batch_size < 0) {
    throw new Error(`'max_batch_size' must be non-negative value for ${config.name}`);
  }
  for (const input of config.input) checkTensor("input", input);
  for (const output of config.output) checkTensor("output", output);
  checkDynamicBatching(config);
  if (config.model_transaction_policy?.decoupled === true && config.sequence_batching !== undefined) {
    // Triton allows it; here a Direct batch's null requests have no stream to answer, so it is refused at load.
    throw new Error(`model '${config.name}': a decoupled model (model_transaction_policy { decoupled: true }) with sequence_batching is not supported by this server`);
  }
}

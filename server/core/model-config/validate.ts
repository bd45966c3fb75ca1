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

/**
 * The checks Triton makes on a parsed config before loading (ValidateModelConfig): values the text format
 * accepts but no model can serve. Throws with the reason, which makes the model UNAVAILABLE; without them a
 * `dims: [ -5 ]` model would load READY and then refuse every request.
 */
export function validateModelConfig(config: ModelConfig): void {
  if (config.max_batch_size < 0) {
    throw new Error(`max_batch_size must be 0 (no batching) or a positive batch size, got ${config.max_batch_size}`);
  }
  for (const input of config.input) checkTensor("input", input);
  for (const output of config.output) checkTensor("output", output);
}

import type { ModelConfig, ModelInput, ModelOutput } from "./model-config";

/** Triton's WILDCARD_DIM: a dimension whose size each request chooses. */
const VARIABLE_DIM = -1;
/** What Triton's GetElementCount answers for dims with a variable dimension (WILDCARD_SIZE). */
const VARIABLE_SIZE = -1;
/** The only platform Triton allows shape tensors and non-linear IO formats on. */
const TENSORRT_PLATFORM = "tensorrt_plan";

const BATCH_INPUT_KINDS: ReadonlySet<string> = new Set([
  "BATCH_ELEMENT_COUNT", "BATCH_ACCUMULATED_ELEMENT_COUNT", "BATCH_ACCUMULATED_ELEMENT_COUNT_WITH_ZERO",
  "BATCH_MAX_ELEMENT_COUNT_AS_SHAPE", "BATCH_ITEM_SHAPE", "BATCH_ITEM_SHAPE_FLATTEN",
]);

const isValidDim = (dim: number): boolean => dim >= 1 || dim === VARIABLE_DIM;

/** Triton's triton::common::GetElementCount: -1 with a variable dimension, 0 for no dimensions. */
function elementCount(dims: readonly number[]): number {
  if (dims.includes(VARIABLE_DIM)) return VARIABLE_SIZE;
  return dims.length === 0 ? 0 : dims.reduce((product, dim) => product * dim, 1);
}

/** The element counts of the runs of fixed dimensions between variable ones: [2,4,-1,6] -> [8,6]. */
function fixedRunCounts(dims: readonly number[]): number[] {
  const counts = [1];
  for (const dim of dims) {
    if (dim === VARIABLE_DIM) counts.push(1);
    else counts[counts.length - 1]! *= dim;
  }
  return counts;
}

/** Triton's ValidateIOShape (core src/model_config_utils.cc), word for word; `kind` is "input" or "output". */
function checkShape(kind: "input" | "output", io: ModelInput | ModelOutput, maxBatchSize: number): void {
  if (io.name === "") throw new Error(`model ${kind} must specify 'name'`);
  const prefix = `model ${kind} '${io.name}' `;
  if (io.data_type === "TYPE_INVALID") throw new Error(`${prefix}must specify 'data_type'`);
  if (io.dims.length === 0) throw new Error(`${prefix}must specify 'dims'`);
  const reshape = io.reshape?.shape;
  if (reshape !== undefined && reshape.length === 0 && maxBatchSize === 0) {
    throw new Error(`${prefix}cannot have empty reshape for non-batching model as scalar tensors are not supported`);
  }
  if (!io.dims.every(isValidDim)) throw new Error(`${prefix}dimension must be integer >= 1, or -1 to indicate a variable-size dimension`);
  if (reshape === undefined) return;
  if (!reshape.every(isValidDim)) throw new Error(`${prefix}reshape dimensions must be integer >= 1, or -1 to indicate a variable-size dimension`);
  const dimsSize = elementCount(io.dims);
  const reshapeSize = elementCount(reshape);
  // An empty reshape (a batching model's scalar) must come from dims of one element.
  if (dimsSize !== reshapeSize && (reshapeSize !== 0 || dimsSize !== 1)) throw new Error(`${prefix}has different size for dims and reshape`);
  if (dimsSize !== VARIABLE_SIZE) return;
  // From [2,4,-1,6] to [8,-1,1,6] is valid: each run between variable dimensions keeps its element count.
  const dimsRuns = fixedRunCounts(io.dims);
  const reshapeRuns = fixedRunCounts(reshape);
  if (dimsRuns.length !== reshapeRuns.length) throw new Error(`${prefix}has different number of variable-size dimensions for dims and reshape`);
  if (dimsRuns.some((count, i) => count !== reshapeRuns[i])) throw new Error(`${prefix}has different size for dims and reshape`);
}

/** Triton's ValidateModelInput / ValidateModelOutput past the shape. */
function checkTensor(kind: "input" | "output", io: ModelInput | ModelOutput, config: ModelConfig): void {
  checkShape(kind, io, config.max_batch_size);
  if ("format" in io && (io.format === "FORMAT_NHWC" || io.format === "FORMAT_NCHW") && io.dims.length !== 3) {
    throw new Error("model input NHWC/NCHW require 3 dims");
  }
  if (config.platform !== TENSORRT_PLATFORM && io.is_shape_tensor) throw new Error("shape tensors are only supported for TensorRT platform");
  if (config.platform !== TENSORRT_PLATFORM && io.is_non_linear_format_io) throw new Error("Non-linear IO format is only supported for the TensorRT platform");
}

/** Triton's ValidateBatchIO. */
function checkBatchIo(config: ModelConfig): void {
  const inputNames = new Set(config.input.map((io) => io.name));
  const outputNames = new Set(config.output.map((io) => io.name));
  const checkSources = (sources: readonly string[]): void => {
    const unknown = sources.find((source) => !inputNames.has(source));
    if (unknown !== undefined) throw new Error(`unknown source input name '${unknown}'`);
  };
  for (const batchInput of config.batch_input) {
    if (!BATCH_INPUT_KINDS.has(batchInput.kind)) throw new Error(`unknown batch input kind '${batchInput.kind}'`);
    if (batchInput.source_input.length !== 1) throw new Error(`batch input kind '${batchInput.kind}' expects 1 source input, got ${batchInput.source_input.length}`);
    if (batchInput.data_type !== "TYPE_INT32" && batchInput.data_type !== "TYPE_FP32") throw new Error("batch input data type must be TYPE_INT32 or TYPE_FP32");
    checkSources(batchInput.source_input);
  }
  for (const batchOutput of config.batch_output) {
    if (batchOutput.source_input.length !== 1) throw new Error(`batch output kind '${batchOutput.kind}' expects 1 source input, got ${batchOutput.source_input.length}`);
    checkSources(batchOutput.source_input);
    const targets = new Set<string>();
    for (const target of batchOutput.target_name) {
      if (!outputNames.has(target)) throw new Error(`unknown target output name '${target}'`);
      if (targets.has(target)) throw new Error(`target output name '${target}' can only be specified once`);
      targets.add(target);
    }
  }
}

/**
 * Triton's ValidateModelIOConfig (core src/model_config_utils.cc): every input and output names itself, has a
 * data type, valid dims, and a `reshape` of the same element count; batch inputs and outputs name tensors the
 * config has. Throws with Triton's message followed by ` for <model>`. Triton runs it before it looks for version
 * directories when auto-complete is off, else once the config is completed.
 */
export function validateModelIoConfig(config: ModelConfig): void {
  try {
    for (const input of config.input) checkTensor("input", input, config);
    for (const output of config.output) checkTensor("output", output, config);
    checkBatchIo(config);
  } catch (error) {
    throw new Error(`${(error as Error).message} for ${config.name}`, { cause: error });
  }
}

import type { ModelIo, TensorSpec } from "../../backends/backend";
import { type DataType, dataTypeToConfig } from "../../../protocol/datatypes";
import { checkAgainstModel, type ServerTensors } from "./model-agreement";
import type { ModelConfig, ModelInput, ModelOutput } from "./model-config";

export interface AutoCompleteOptions {
  /** False with `--disable-auto-complete-config`: the config must then declare every input and output. */
  readonly enabled: boolean;
  /** Triton's `default-max-batch-size` (4). */
  readonly defaultMaxBatchSize: number;
}

const canBatch = (io: ModelIo): boolean =>
  [...io.inputs, ...io.outputs].every((t) => t.shape.length >= 1 && t.shape[0] === -1);

/**
 * Completes a model config from what the model file declares, as Triton's ONNX Runtime backend does: inputs and
 * outputs (names, types, dims) when the config lists none, and `max_batch_size` = the default plus an empty
 * `dynamic_batching {}` when every input and output has a variable first dimension and the config did not
 * settle batching. Then checks that the config and the model agree; a mismatch throws with the reason the
 * model becomes UNAVAILABLE for.
 */
export function completeConfig(
  config: ModelConfig, io: ModelIo | undefined, options: AutoCompleteOptions, server: ServerTensors = { inputs: [], outputs: [] },
): ModelConfig {
  const completed: ModelConfig = structuredClone(config);
  const listsIo = config.input.length > 0 && config.output.length > 0;
  if (io !== undefined && options.enabled) {
    // Triton's ONNX Runtime backend (src/onnxruntime.cc, AutoCompleteMaxBatch).
    if (completed.max_batch_size > 0 && !canBatch(io)) {
      throw new Error(`autofill failed for model '${config.name}': model does not support batching while non-zero max_batch_size is specified`);
    }
    if (!listsIo && completed.max_batch_size === 0 && canBatch(io)) {
      completed.max_batch_size = options.defaultMaxBatchSize;
      if (completed.dynamic_batching === undefined && completed.sequence_batching === undefined && completed.ensemble_scheduling === undefined) {
        completed.dynamic_batching = emptyDynamicBatching();
      }
    }
    const batching = completed.max_batch_size > 0;
    if (completed.input.length === 0) {
      completed.input = io.inputs.filter((t) => !server.inputs.includes(t.name)).map((t) => inputFromModel(t, batching));
    }
    if (completed.output.length === 0) completed.output = io.outputs.filter((t) => !server.outputs.includes(t.name)).map((t) => outputFromModel(t, batching));
  }
  if (completed.input.length === 0 || completed.output.length === 0) {
    throw new Error("model configuration must list its inputs and outputs (auto-complete is disabled or the backend cannot read them)");
  }
  if (io !== undefined) checkAgainstModel(completed, io, server);
  return completed;
}

function emptyDynamicBatching(): NonNullable<ModelConfig["dynamic_batching"]> {
  return {
    preferred_batch_size: [], max_queue_delay_microseconds: 0, preserve_ordering: false, priority_levels: 0,
    default_priority_level: 0, priority_queue_policy: {},
  } as unknown as NonNullable<ModelConfig["dynamic_batching"]>;
}

function modelDims(tensor: TensorSpec, batching: boolean): number[] {
  const dims = batching ? tensor.shape.slice(1) : [...tensor.shape];
  return dims.length === 0 ? [1] : dims;
}

function inputFromModel(tensor: TensorSpec, batching: boolean): ModelInput {
  return {
    name: tensor.name, data_type: dataTypeToConfig(tensor.datatype as DataType), format: "FORMAT_NONE",
    dims: modelDims(tensor, batching), is_shape_tensor: false, allow_ragged_batch: false, optional: false,
    is_non_linear_format_io: false,
  } as ModelInput;
}

function outputFromModel(tensor: TensorSpec, batching: boolean): ModelOutput {
  return {
    name: tensor.name, data_type: dataTypeToConfig(tensor.datatype as DataType), dims: modelDims(tensor, batching),
    label_filename: "", is_shape_tensor: false, is_non_linear_format_io: false,
  } as ModelOutput;
}

import type { ModelIo, TensorSpec } from "../../backends/backend";
import { type DataType, dataTypeFromConfig, dataTypeToConfig } from "../../../protocol/datatypes";
import type { ModelConfig, ModelInput, ModelOutput } from "./model-config";

export interface AutoCompleteOptions {
  /** False with `--disable-auto-complete-config`: the config must then declare every input and output. */
  readonly enabled: boolean;
  /** Triton's `default-max-batch-size` (4). */
  readonly defaultMaxBatchSize: number;
}

const canBatch = (io: ModelIo): boolean =>
  [...io.inputs, ...io.outputs].every((t) => t.shape.length >= 1 && t.shape[0] === -1);

function sameDims(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

function describe(kind: "input" | "output", tensors: readonly { name: string }[]): string {
  return tensors.map((t) => `'${t.name}'`).join(", ") || `no ${kind}s`;
}

/**
 * Completes a model config from what the model file declares, as Triton's ONNX Runtime backend does: inputs and
 * outputs (names, types, dims) when the config lists none, and `max_batch_size` = the default plus an empty
 * `dynamic_batching {}` when every input and output has a variable first dimension and the config did not
 * settle batching. Then checks that the config and the model agree; a mismatch throws with the reason the
 * model becomes UNAVAILABLE for.
 */
/** Tensors of the model that the server feeds and reads itself (sequence controls, implicit state), never the client. */
export interface ServerTensors {
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
}

export function completeConfig(
  config: ModelConfig, io: ModelIo | undefined, options: AutoCompleteOptions, server: ServerTensors = { inputs: [], outputs: [] },
): ModelConfig {
  const completed: ModelConfig = structuredClone(config);
  const listsIo = config.input.length > 0 && config.output.length > 0;
  if (io !== undefined && options.enabled) {
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

function checkAgainstModel(config: ModelConfig, io: ModelIo, server: ServerTensors): void {
  const batching = config.max_batch_size > 0;
  if (batching && !canBatch(io)) {
    throw new Error(
      `configuration specifies max_batch_size ${config.max_batch_size}, but the model does not support batching: ` +
      "every input and output needs a variable first dimension",
    );
  }
  const check = (kind: "input" | "output", declared: readonly (ModelInput | ModelOutput)[], actual: readonly TensorSpec[]): void => {
    for (const tensor of declared) {
      const model = actual.find((t) => t.name === tensor.name);
      if (model === undefined) {
        throw new Error(`unexpected ${kind} '${tensor.name}' in model configuration, the model has ${describe(kind, actual)}`);
      }
      const declaredType = dataTypeFromConfig(tensor.data_type);
      if (declaredType !== model.datatype) {
        throw new Error(`${kind} '${tensor.name}' is ${tensor.data_type} in the configuration, but ${dataTypeToConfig(model.datatype as DataType)} in the model`);
      }
      const configDims = tensor.reshape !== undefined ? tensor.reshape.shape : tensor.dims;
      const modelItemDims = batching ? model.shape.slice(1) : [...model.shape];
      const compatible = configDims.length === modelItemDims.length &&
        configDims.every((d, i) => modelItemDims[i] === -1 || d === modelItemDims[i]) ||
        (modelItemDims.length === 0 && sameDims(configDims, [1]));
      if (!compatible) {
        throw new Error(
          `${kind} '${tensor.name}' has dims [${configDims.join(",")}] in the configuration, but the model's ${batching ? "non-batch " : ""}shape is [${modelItemDims.join(",")}]`,
        );
      }
    }
  };
  check("input", config.input, io.inputs);
  check("output", config.output, io.outputs);
  for (const name of server.outputs) {
    if (!io.outputs.some((t) => t.name === name)) throw new Error(`state output '${name}' is not an output of the model, which has ${describe("output", io.outputs)}`);
  }
  const missing = io.inputs.filter((t) => !config.input.some((i) => i.name === t.name) && !server.inputs.includes(t.name));
  if (missing.length > 0) throw new Error(`model requires input(s) ${describe("input", missing)} that the configuration does not list`);
}

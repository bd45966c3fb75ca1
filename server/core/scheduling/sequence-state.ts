import { readFileSync } from "node:fs";
import { type DataType, dataTypeFromConfig, ELEMENT_BYTE_SIZE } from "../../../protocol/datatypes";
import type { ModelConfig } from "../model-config/model-config";
import type { Tensor } from "../request/tensor";

/** One implicit state of a sequence model (`sequence_batching.state`), with the tensor a sequence starts from. */
export interface StateSpec {
  readonly inputName: string;
  readonly outputName: string;
  readonly datatype: DataType;
  /** The state input of a sequence's first request, shaped for one request (with the batch dimension of 1 when the model batches). */
  readonly initial: Tensor;
}

function zeros(datatype: DataType, shape: readonly number[]): Uint8Array {
  const elements = shape.reduce((product, dim) => product * dim, 1);
  // A BYTES element of zero length is its 4-byte length prefix (Triton's SetStringDataToZero).
  return new Uint8Array(elements * (ELEMENT_BYTE_SIZE[datatype] || 4));
}

/** Zeros shaped like `like`, for a null request's state input. */
export function zeroState(like: Tensor): Tensor {
  return { ...like, data: zeros(like.datatype, like.shape) };
}

/**
 * The model's implicit states, checked as Triton's SequenceBatchScheduler::Create and GenerateInitialStateData
 * (triton-inference-server/core src/sequence_batch_scheduler/sequence_batch_scheduler.cc) and initialized as
 * SequenceStates::Initialize (src/sequence_state.cc): without `initial_state` a state starts as zeros with its
 * variable dims as 1 (Triton leaves the bytes unset); with one, as its `zero_data` or the bytes of
 * `<model>/initial_state/<data_file>` (`resolve` maps that path inside the model directory).
 */
export function stateSpecsOf(config: ModelConfig, resolve: (relative: string) => string): StateSpec[] {
  const batching = config.max_batch_size > 0;
  const specs: StateSpec[] = [];
  for (const state of config.sequence_batching?.state ?? []) {
    const datatype = dataTypeFromConfig(state.data_type);
    if (datatype === undefined) throw new Error(`state '${state.input_name}' has no valid data_type`);
    if (state.use_growable_memory && !state.use_same_buffer_for_input_output) {
      throw new Error(`In order to 'use_growable_memory', you must also enable 'use_single_buffer' for state input name '${state.input_name}'.`);
    }
    if (specs.some((s) => s.inputName === state.input_name)) throw new Error(`State input name '${state.input_name}' specified more than once.`);
    if (specs.some((s) => s.outputName === state.output_name)) throw new Error(`state output name '${state.output_name}' specified more than once.`);
    if (state.initial_state.length > 1) {
      throw new Error(`initial_state field for state input '${state.input_name}' must contain exactly one or zero element. Found '${state.initial_state.length}' elements.`);
    }
    const batch = batching ? [1] : [];
    const initial = state.initial_state[0];
    let shape: number[];
    let data: Uint8Array;
    if (initial === undefined) {
      shape = [...batch, ...state.dims.map((dim) => (dim === -1 ? 1 : dim))];
      data = zeros(datatype, shape);
    } else {
      if (initial.data_type !== state.data_type) {
        throw new Error(`The data type used for 'initial_state' field of state '${state.input_name}' does not match the state data type.`);
      }
      if (initial.name === "") throw new Error(`Field 'name' must be set when using initial_state for state input '${state.input_name}'.`);
      if (initial.dims.length !== state.dims.length) {
        throw new Error(`Number of dimensions in 'initial_state' doesn't match the size of 'state' dimensions for state input '${state.input_name}'. ${initial.dims.length} != ${state.dims.length}`);
      }
      initial.dims.forEach((dim, i) => {
        if (dim === -1) throw new Error(`'initial_state' field for state input name '${state.input_name}' contains variable dimensions.`);
        const declared = state.dims[i]!;
        if (declared !== -1 && dim !== declared) {
          throw new Error(`'initial_state' dim for input name '${state.input_name}' doesn't match 'state' dim description. ${dim} != ${declared}`);
        }
      });
      shape = [...batch, ...initial.dims.map(Number)];
      if (initial.zero_data === true) {
        data = zeros(datatype, shape);
      } else if (initial.data_file !== undefined && initial.data_file !== "") {
        const file = readFileSync(resolve(`initial_state/${initial.data_file}`));
        const byteSize = zeros(datatype, shape).byteLength;
        if (datatype !== "BYTES" && file.byteLength < byteSize) {
          // Triton's words, its missing space included (clients may match them).
          throw new Error(`initial_state setting expects ${byteSize} bytes, but the data provided from ${initial.data_file}only has ${file.byteLength} bytes.`);
        }
        data = new Uint8Array(datatype === "BYTES" ? file : file.subarray(0, byteSize));
      } else {
        throw new Error(`initial_state setting expects state'${state.input_name}' to have state_data set`);
      }
    }
    specs.push({ inputName: state.input_name, outputName: state.output_name, datatype, initial: { name: state.input_name, datatype, shape, data } });
  }
  return specs;
}

import { clipped, InferenceError, type InferRequest, isDataType, type RequestedOutput, type Tensor } from "../../core/index";
import type { SharedMemoryReference } from "../shared-memory/system-shared-memory";
import {
  NO_DATA, type ParameterReader, refuseSharedMemoryClassification, sharedMemoryOf, sharedMemoryReference, type TensorSharedMemory,
} from "../shared-memory/tensor-shared-memory";
import type { _inference_ModelInferRequest_InferInputTensor__Output as InferInputTensor, ModelInferRequest__Output } from "../../../protocol/grpc-types/longs-as-strings/inference/ModelInferRequest";
import { type InferParameterMap, classificationCount, decodeRequestParameters } from "./request-parameters";
import { typedContentsToBytes } from "./typed-contents";

function invalid(message: string): InferenceError {
  return new InferenceError("INVALID_ARG", message);
}

/** Triton's types for the shared-memory parameters: string_param for the region, int64_param for sizes. */
const readGrpcParameter: ParameterReader<InferParameterMap> = (parameters, key, kind, tensorName) => {
  const parameter = parameters[key];
  if (parameter === undefined) return undefined;
  const expected = kind === "string" ? "string_param" : "int64_param";
  if (parameter.parameter_choice === expected) {
    if (kind === "string") return parameter.string_param ?? "";
    const value = Number(parameter.int64_param ?? "0");
    if (Number.isSafeInteger(value)) return value;
  }
  throw invalid(`invalid value type for '${clipped(key)}' parameter for tensor '${clipped(tensorName)}', expected ${expected}.`);
};

/** A ModelInferRequest as the core's request, and the tensors it places in shared memory. */
export interface DecodedModelInferRequest {
  readonly request: InferRequest;
  /** Undefined when no tensor is in shared memory. */
  readonly sharedMemory: TensorSharedMemory | undefined;
}

function shapeOf(input: InferInputTensor): number[] {
  return input.shape.map((text) => {
    const dim = Number(text);
    if (!Number.isSafeInteger(dim) || dim < 0) {
      throw invalid(`input '${input.name}' has an invalid dimension ${text} in its shape: dimensions are non-negative integers`);
    }
    return dim;
  });
}

/** Hands out `raw_input_contents` in order to the inputs not in shared memory, as Triton counts them. */
class RawContents {
  #next = 0;
  constructor(private readonly entries: readonly Uint8Array[]) {}

  take(): Uint8Array | undefined {
    return this.entries[this.#next++];
  }

  get unclaimed(): number {
    return Math.max(0, this.entries.length - this.#next);
  }
}

function decodeInput(message: ModelInferRequest__Output, input: InferInputTensor, raw: RawContents, shared: Record<string, SharedMemoryReference>): Tensor {
  if (!isDataType(input.datatype)) throw invalid(`input '${clipped(input.name)}' has an invalid datatype '${clipped(input.datatype)}'`);
  const reference = sharedMemoryReference(input.name, input.parameters, readGrpcParameter);
  if (reference !== undefined) {
    if (input.contents !== null) {
      throw invalid(`unexpected 'content' provided when using shared memory for input tensor '${input.name}' for model '${message.model_name}'`);
    }
    shared[input.name] = reference;
    return { name: input.name, datatype: input.datatype, shape: shapeOf(input), data: NO_DATA };
  }
  const origin = { inputName: input.name, modelName: message.model_name };
  let data: Uint8Array;
  const rawData = input.contents === null ? raw.take() : undefined;
  if (input.contents !== null) {
    if (message.raw_input_contents.length > 0) {
      throw invalid(`contents field must not be specified when using raw_input_contents for '${input.name}' for model '${message.model_name}'`);
    }
    data = typedContentsToBytes(input.datatype, input.contents, origin);
  } else if (rawData !== undefined) {
    data = rawData;
  } else {
    throw invalid(`unable to find data for input tensor '${input.name}' for model '${message.model_name}' in request.`);
  }
  return { name: input.name, datatype: input.datatype, shape: shapeOf(input), data };
}

/**
 * A `ModelInferRequest` -> the core's request. Tensors come either all as typed `contents` or all as
 * `raw_input_contents` (one entry per input, in order), never mixed, as in Triton. Raw payloads are passed on
 * without a copy; inputs in shared memory take no raw entry. Every problem is an INVALID_ARG naming the tensor at
 * fault.
 */
export function decodeModelInferRequest(message: ModelInferRequest__Output): DecodedModelInferRequest {
  const raw = message.raw_input_contents;
  if (raw.length > message.inputs.length) {
    throw invalid(`raw_input_contents has ${raw.length} entries, but the request has ${message.inputs.length} inputs`);
  }
  const contents = new RawContents(raw);
  const sharedInputs: Record<string, SharedMemoryReference> = {};
  const inputs = message.inputs.map((input) => decodeInput(message, input, contents, sharedInputs));
  if (contents.unclaimed > 0) {
    throw invalid(`raw_input_contents has ${raw.length} entries, but only ${raw.length - contents.unclaimed} inputs of the request are not in shared memory`);
  }
  const sharedOutputs: Record<string, SharedMemoryReference> = {};
  const outputs = message.outputs.map((output): RequestedOutput => {
    const reference = sharedMemoryReference(output.name, output.parameters, readGrpcParameter);
    const classification = classificationCount(output.parameters);
    if (reference !== undefined) {
      if (classification !== undefined) refuseSharedMemoryClassification(output.name);
      sharedOutputs[output.name] = reference;
    }
    return classification === undefined ? { name: output.name } : { name: output.name, classification };
  });
  const request: InferRequest = {
    modelName: message.model_name,
    modelVersion: message.model_version === "" ? undefined : message.model_version,
    id: message.id === "" ? undefined : message.id,
    parameters: decodeRequestParameters(message.parameters),
    inputs,
    outputs: outputs.length > 0 ? outputs : undefined,
  };
  return { request, sharedMemory: sharedMemoryOf(sharedInputs, sharedOutputs) };
}

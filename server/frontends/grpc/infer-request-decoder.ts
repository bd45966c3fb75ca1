import { InferenceError, type InferRequest, isDataType, type RequestedOutput, type Tensor } from "../../core/index";
import type { InferInputTensorMessage, InferParameterMap, ModelInferRequestMessage } from "./grpc-messages";
import { classificationCount, decodeRequestParameters } from "./request-parameters";
import { typedContentsToBytes } from "./typed-contents";

const SHARED_MEMORY_PARAMETERS = ["shared_memory_region", "shared_memory_byte_size", "shared_memory_offset"];

function invalid(message: string): InferenceError {
  return new InferenceError("INVALID_ARG", message);
}

function refuseSharedMemory(parameters: InferParameterMap, what: string): void {
  const key = SHARED_MEMORY_PARAMETERS.find((p) => p in parameters);
  if (key !== undefined) throw new InferenceError("UNSUPPORTED", `${what}: shared memory (${key}) is not supported by this server`);
}

function shapeOf(input: InferInputTensorMessage): number[] {
  return input.shape.map((text) => {
    const dim = Number(text);
    if (!Number.isSafeInteger(dim) || dim < 0) {
      throw invalid(`input '${input.name}' has an invalid dimension ${text} in its shape: dimensions are non-negative integers`);
    }
    return dim;
  });
}

function decodeInput(message: ModelInferRequestMessage, input: InferInputTensorMessage, raw: Uint8Array | undefined): Tensor {
  if (!isDataType(input.datatype)) throw invalid(`input '${input.name}' has an invalid datatype '${input.datatype}'`);
  refuseSharedMemory(input.parameters, `input '${input.name}'`);
  const origin = { inputName: input.name, modelName: message.model_name };
  let data: Uint8Array;
  if (input.contents !== null) {
    if (message.raw_input_contents.length > 0) {
      throw invalid(`contents field must not be specified when using raw_input_contents for '${input.name}' for model '${message.model_name}'`);
    }
    data = typedContentsToBytes(input.datatype, input.contents, origin);
  } else if (raw !== undefined) {
    data = raw;
  } else {
    throw invalid(`unable to find data for input tensor '${input.name}' for model '${message.model_name}' in request.`);
  }
  return { name: input.name, datatype: input.datatype, shape: shapeOf(input), data };
}

/**
 * A `ModelInferRequest` -> the core's request. Tensors come either all as typed `contents` or all as
 * `raw_input_contents` (one entry per input, in order), never mixed, as in Triton. Raw payloads are passed on
 * without a copy. Every problem is an INVALID_ARG naming the tensor at fault; shared memory is UNSUPPORTED.
 */
export function decodeModelInferRequest(message: ModelInferRequestMessage): InferRequest {
  const raw = message.raw_input_contents;
  if (raw.length > message.inputs.length) {
    throw invalid(`raw_input_contents has ${raw.length} entries, but the request has ${message.inputs.length} inputs`);
  }
  const inputs = message.inputs.map((input, index) => decodeInput(message, input, raw[index]));
  const outputs = message.outputs.map((output): RequestedOutput => {
    refuseSharedMemory(output.parameters, `output '${output.name}'`);
    const classification = classificationCount(output.parameters);
    return classification === undefined ? { name: output.name } : { name: output.name, classification };
  });
  return {
    modelName: message.model_name,
    modelVersion: message.model_version === "" ? undefined : message.model_version,
    id: message.id === "" ? undefined : message.id,
    parameters: decodeRequestParameters(message.parameters),
    inputs,
    outputs: outputs.length > 0 ? outputs : undefined,
  };
}

import {
  clipped, elementCount, ELEMENT_BYTE_SIZE, InferenceError, type InferRequest, isDataType, type ModelInputs,
  type ParameterValue, type RequestedOutput, type Tensor,
} from "../../core/index";
import {
  NO_DATA, type ParameterReader, refuseSharedMemoryClassification, sharedMemoryOf, sharedMemoryReference, type TensorSharedMemory,
} from "../shared-memory/tensor-shared-memory";
import type { SharedMemoryReference } from "../shared-memory/system-shared-memory";
import { jsonText, parseExactJson } from "./exact-json";
import { encodeJsonData } from "./json-tensor-data";
import { checkJsonElementCount, jsonShape, safeShape } from "./json-shape";
import { encodeJsonDataArray, type JsonDataArray, splitHeader } from "./json-data-arrays";

/** How the client wants each output back. */
export interface OutputEncoding {
  /** Outputs to return as binary (binary tensor data extension). */
  readonly binaryOutputs: ReadonlySet<string>;
  /** A raw binary request gets every output as binary. */
  readonly allBinary: boolean;
}

export interface DecodedInferRequest {
  readonly request: InferRequest;
  readonly encoding: OutputEncoding;
  /** Inputs to read from and outputs to write to shared memory (their tensors' data is empty until read); undefined when none. */
  readonly sharedMemory: TensorSharedMemory | undefined;
}

function invalid(message: string): InferenceError {
  return new InferenceError("INVALID_ARG", message);
}

/** A JSON object: neither null nor an array. */
/** A request body's `id`, read as Triton's ParseJsonTritonRequestID reads it (its words for one not a string). */
export function requestIdOf(body: Record<string, unknown>): string | undefined {
  const id = body["id"];
  if (id !== undefined && typeof id !== "string") throw invalid("Unable to parse 'id': attempt to access JSON non-string as string");
  return id;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const REQUEST = "the request";

/** Triton's refusal of a request parameter JSON cannot make one of (src/http_server.cc, SetTritonParameterFromJsonParameter). */
export function invalidParameterType(key: string): InferenceError {
  return invalid(`parameter '${clipped(key)}' has invalid type. It should be either 'int', 'bool', or 'string'.`);
}

/** `where`: the request's own parameters (Triton's words for a bad one), or a tensor's (`input 'x'`, `output 'y'`). */
function parameters(value: unknown, where: string): Record<string, ParameterValue> {
  if (value === undefined) return {};
  if (!isRecord(value)) throw invalid(`'parameters' of ${where} must be a JSON object`);
  const out: Record<string, ParameterValue> = {};
  for (const [key, v] of Object.entries(value)) {
    if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean" && typeof v !== "bigint") {
      if (where === REQUEST) throw invalidParameterType(key);
      throw invalid(`parameter '${clipped(key)}' of ${where} must be a string, number or boolean`);
    }
    out[key] = v;
  }
  return out;
}

/** JSON parameters as Triton's shared-memory parameters: a string region, integer sizes. */
const readJsonParameter: ParameterReader<Record<string, ParameterValue>> = (params, key, kind, tensorName) => {
  const value = params[key];
  if (value === undefined) return undefined;
  if (kind === "string" ? typeof value === "string" : typeof value === "number" && Number.isSafeInteger(value)) return value as string | number;
  throw invalid(`invalid value type for '${clipped(key)}' parameter for tensor '${clipped(tensorName)}', expected ${kind === "string" ? "a string" : "an integer"}`);
};

/** Reads tensors' binary payloads in order from the bytes after the JSON header. */
class BinarySection {
  #offset = 0;
  constructor(private readonly bytes: Uint8Array) {}

  take(size: number, name: string): Uint8Array {
    if (this.#offset + size > this.bytes.byteLength) {
      throw invalid(`unexpected end of binary data for input '${name}': binary_data_size is ${size}, but only ${this.bytes.byteLength - this.#offset} bytes remain`);
    }
    const slice = this.bytes.subarray(this.#offset, this.#offset + size);
    this.#offset += size;
    return slice;
  }

  assertConsumed(): void {
    const left = this.bytes.byteLength - this.#offset;
    if (left > 0) throw invalid(`${left} bytes of binary data were not claimed by any input's binary_data_size`);
  }
}

/** Where an input's data comes from besides its JSON: the binary section, or its data array in the body. */
interface InputSources {
  readonly binary: BinarySection;
  readonly body: Uint8Array;
  readonly dataArrays: ReadonlyMap<number, JsonDataArray>;
}

function decodeInput(raw: unknown, index: number, sources: InputSources, modelName: string, shared: Record<string, SharedMemoryReference>): Tensor {
  if (!isRecord(raw)) throw invalid(`inputs[${index}] must be a JSON object`);
  const name = raw["name"];
  if (typeof name !== "string" || name === "") throw invalid(`inputs[${index}] must have a non-empty string 'name'`);
  const datatype = raw["datatype"];
  if (typeof datatype !== "string" || !isDataType(datatype)) {
    throw invalid(`input '${name}' has an invalid datatype ${jsonText(datatype)}`);
  }
  const exactShape = jsonShape(raw["shape"], name);
  const params = parameters(raw["parameters"], `input '${name}'`);
  const reference = sharedMemoryReference(name, params, readJsonParameter);
  if (reference !== undefined) {
    const shape = safeShape(exactShape, name);
    for (const field of ["data", "binary_data_size"]) {
      if (field in raw || field in params) {
        throw invalid(`unexpected '${field}' provided when using shared memory for input tensor '${name}' for model '${modelName}'`);
      }
    }
    shared[name] = reference;
    return { name, datatype, shape, data: NO_DATA };
  }
  const binarySize = params["binary_data_size"];
  if (binarySize !== undefined) {
    if (typeof binarySize !== "number" || !Number.isSafeInteger(binarySize) || binarySize < 0) {
      throw invalid(`input '${name}' has an invalid binary_data_size ${jsonText(binarySize)}`);
    }
    if ("data" in raw) throw invalid(`input '${name}' has both 'data' and binary_data_size: use one`);
    return { name, datatype, shape: safeShape(exactShape, name), data: sources.binary.take(binarySize, name) };
  }
  if (!("data" in raw)) throw invalid(`input '${name}' has neither 'data' nor a binary_data_size parameter`);
  checkJsonElementCount(exactShape, datatype, name);
  const shape = safeShape(exactShape, name);
  const array = sources.dataArrays.get(index);
  const data = array === undefined
    ? encodeJsonData(datatype, raw["data"], elementCount(shape), name)
    : encodeJsonDataArray(datatype, sources.body, array, elementCount(shape), name);
  return { name, datatype, shape, data };
}

interface DecodedOutputs {
  readonly outputs: RequestedOutput[] | undefined;
  readonly binary: Set<string>;
  readonly shared: Record<string, SharedMemoryReference>;
}

function decodeOutputs(raw: unknown): DecodedOutputs {
  const binary = new Set<string>();
  const shared: Record<string, SharedMemoryReference> = {};
  if (raw === undefined) return { outputs: undefined, binary, shared };
  if (!Array.isArray(raw)) throw invalid("'outputs' must be an array");
  const outputs = raw.map((entry, index): RequestedOutput => {
    if (!isRecord(entry) || typeof entry["name"] !== "string") throw invalid(`outputs[${index}] must be an object with a string 'name'`);
    const name = entry["name"];
    const params = parameters(entry["parameters"], `output '${name}'`);
    const reference = sharedMemoryReference(name, params, readJsonParameter);
    const asBinary = params["binary_data"];
    if (asBinary !== undefined && typeof asBinary !== "boolean") throw invalid(`output '${name}': binary_data must be a boolean`);
    const classification = params["classification"];
    if (reference !== undefined) {
      if (classification !== undefined) refuseSharedMemoryClassification(name);
      shared[name] = reference;
      return { name };
    }
    // Triton's CheckBinaryOutputData (server src/http_server.cc): a listed output is binary only when it says so;
    // binary_data_output is the default for the outputs not listed.
    if (asBinary === true) binary.add(name);
    if (classification === undefined) return { name };
    if (typeof classification !== "number") throw invalid(`output '${name}': classification must be an integer`);
    return { name, classification };
  });
  return { outputs, binary, shared };
}

export interface RawBodyContext {
  readonly modelName: string;
  readonly modelVersion: string | undefined;
  /** Looked up only for raw binary requests (Inference-Header-Content-Length: 0). */
  readonly modelInputs: () => ModelInputs;
}

/**
 * The raw binary request of the binary extension: the whole body is the model's single input, batch 1. Its shape
 * is deduced as Triton's InferenceRequest::Normalize does (triton-inference-server/core src/infer_request.cc): the
 * config dims behind a batch dimension of 1, the one variable dim from the body's size; BYTES only for dims [1]
 * (then one element, [1, 1] for a batching model).
 */
function decodeRawRequest(body: Uint8Array, context: RawBodyContext): DecodedInferRequest {
  const model = context.modelInputs();
  const input = model.inputs[0];
  if (model.inputs.length !== 1 || input === undefined) {
    throw invalid(`Raw request must only have 1 input (found 1) to be deduced but got ${model.inputs.length} inputs in '${model.name}' model configuration`);
  }
  const { datatype } = input;
  const variable = input.dims.filter((dim) => dim === -1).length;
  if (variable > 1) {
    throw invalid(`The shape of the raw input '${input.name}' can not be deduced because there are more than one variable-sized dimension`);
  }
  const dims = [...input.dims];
  let data = body;
  if (datatype === "BYTES") {
    if (variable > 0 || dims.reduce((product, dim) => product * dim, 1) !== 1) throw invalid("For BYTE datatype raw input, the model must have input shape [1]");
    // The whole body is one element: prefixed with its length, as Triton does.
    data = new Uint8Array(4 + body.byteLength);
    new DataView(data.buffer).setUint32(0, body.byteLength, true);
    data.set(body, 4);
  } else if (variable === 1) {
    const known = dims.reduce((product, dim) => (dim === -1 ? product : product * dim), 1) * ELEMENT_BYTE_SIZE[datatype];
    if (known === 0 || body.byteLength % known !== 0) throw invalid(`raw binary body of ${body.byteLength} bytes does not fit input '${input.name}'`);
    dims[dims.indexOf(-1)] = body.byteLength / known;
  }
  const shape = model.batching ? [1, ...dims] : dims;
  return {
    request: { modelName: context.modelName, modelVersion: context.modelVersion, inputs: [{ name: input.name, datatype, shape, data }] },
    encoding: { binaryOutputs: new Set(), allBinary: true },
    sharedMemory: undefined,
  };
}

/** The message of what `run` throws, or undefined when it does not. */
function messageOf(run: () => unknown): string | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/**
 * Decodes a KServe v2 infer body: plain JSON, JSON header + binary tensors (binary tensor data extension), or a
 * raw single-input binary body. Every problem is an INVALID_ARG naming the tensor at fault.
 */
export function decodeInferRequest(body: Uint8Array, headerLength: number | undefined, context: RawBodyContext): DecodedInferRequest {
  if (headerLength === 0) return decodeRawRequest(body, context);
  const jsonLength = headerLength ?? body.byteLength;
  if (body.byteLength === 0) throw invalid("the inference request body is empty: send a JSON object with an 'inputs' array");
  if (jsonLength > body.byteLength) {
    throw invalid(`Inference-Header-Content-Length ${jsonLength} is larger than the body (${body.byteLength} bytes)`);
  }
  const split = splitHeader(body, jsonLength);
  let header: unknown;
  try {
    header = parseExactJson(split.text);
  } catch (error) {
    // The message (its positions) as the whole header gives it: cutting arrays out never makes a header invalid.
    const text = split.arrays.size === 0 ? undefined : Buffer.from(body.buffer, body.byteOffset, jsonLength).toString("utf8");
    const message = text === undefined ? (error as Error).message : messageOf(() => parseExactJson(text)) ?? (error as Error).message;
    throw invalid(`failed to parse the request JSON buffer: ${message}`);
  }
  if (!isRecord(header)) throw invalid("the inference request must be a JSON object");
  const id = requestIdOf(header);
  const requestParameters = parameters(header["parameters"], REQUEST);
  const binaryDefault = requestParameters["binary_data_output"];
  if (binaryDefault !== undefined && typeof binaryDefault !== "boolean") throw invalid("binary_data_output must be a boolean");
  const rawInputs = header["inputs"];
  if (!Array.isArray(rawInputs)) throw invalid("the inference request must have an 'inputs' array");
  const sources: InputSources = { binary: new BinarySection(body.subarray(jsonLength)), body, dataArrays: split.arrays };
  const sharedInputs: Record<string, SharedMemoryReference> = {};
  const inputs = rawInputs.map((raw, index) => decodeInput(raw, index, sources, context.modelName, sharedInputs));
  sources.binary.assertConsumed();
  const { outputs, binary: binaryOutputs, shared: sharedOutputs } = decodeOutputs(header["outputs"]);
  // Without an 'outputs' list every output is returned, binary when binary_data_output asks for it.
  const allBinary = outputs === undefined && binaryDefault === true;
  return {
    request: {
      modelName: context.modelName, modelVersion: context.modelVersion, id: id === "" ? undefined : id,
      parameters: requestParameters, inputs, outputs,
    },
    encoding: { binaryOutputs, allBinary },
    sharedMemory: sharedMemoryOf(sharedInputs, sharedOutputs),
  };
}

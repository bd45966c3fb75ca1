import { type DataType, InferenceError, joinBytesElements } from "../../core/index";
import type { InferTensorContents__Output } from "../../../protocol/grpc-types/longs-as-strings/inference/InferTensorContents";

type ContentsField = keyof InferTensorContents__Output;

/**
 * Each typed field of `InferTensorContents` and the datatypes it may carry, in field-number order. The last
 * datatype is the field's own, as Triton names it in errors. FP16 and BF16 have no field: they travel raw.
 */
const CONTENTS_FIELDS: readonly { readonly field: ContentsField; readonly datatypes: readonly DataType[] }[] = [
  { field: "bool_contents", datatypes: ["BOOL"] },
  { field: "int_contents", datatypes: ["INT8", "INT16", "INT32"] },
  { field: "int64_contents", datatypes: ["INT64"] },
  { field: "uint_contents", datatypes: ["UINT8", "UINT16", "UINT32"] },
  { field: "uint64_contents", datatypes: ["UINT64"] },
  { field: "fp32_contents", datatypes: ["FP32"] },
  { field: "fp64_contents", datatypes: ["FP64"] },
  { field: "bytes_contents", datatypes: ["BYTES"] },
];

const NARROW_INTEGER_RANGES: Partial<Record<DataType, readonly [number, number]>> = {
  INT8: [-128, 127], INT16: [-32768, 32767], UINT8: [0, 255], UINT16: [0, 65535],
};

/** Names the tensor at fault the way Triton's messages do. */
export interface TensorOrigin {
  readonly inputName: string;
  readonly modelName: string;
}

function invalid(message: string): InferenceError {
  return new InferenceError("INVALID_ARG", message);
}

function view(array: ArrayBufferView): Uint8Array {
  return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
}

// Typed arrays use the platform's byte order; every platform Node and ONNX Runtime ship for is little-endian,
// which is the order the core expects.
function encodeElements(datatype: DataType, contents: InferTensorContents__Output, origin: TensorOrigin): Uint8Array {
  const range = NARROW_INTEGER_RANGES[datatype];
  if (range !== undefined) {
    const values = datatype.startsWith("U") ? contents.uint_contents : contents.int_contents;
    const outside = values.find((v) => v < range[0] || v > range[1]);
    if (outside !== undefined) {
      throw invalid(`value ${outside} of input tensor '${origin.inputName}' for model '${origin.modelName}' is out of range for ${datatype}`);
    }
  }
  switch (datatype) {
    case "BOOL": return Uint8Array.from(contents.bool_contents, (v) => (v ? 1 : 0));
    case "INT8": return view(Int8Array.from(contents.int_contents));
    case "INT16": return view(Int16Array.from(contents.int_contents));
    case "INT32": return view(Int32Array.from(contents.int_contents));
    case "INT64": return view(BigInt64Array.from(contents.int64_contents, (v) => BigInt(v)));
    case "UINT8": return Uint8Array.from(contents.uint_contents);
    case "UINT16": return view(Uint16Array.from(contents.uint_contents));
    case "UINT32": return view(Uint32Array.from(contents.uint_contents));
    case "UINT64": return view(BigUint64Array.from(contents.uint64_contents, (v) => BigInt(v)));
    case "FP32": return view(Float32Array.from(contents.fp32_contents));
    case "FP64": return view(Float64Array.from(contents.fp64_contents));
    case "BYTES": return joinBytesElements(contents.bytes_contents);
    default: throw rawOnly(datatype, origin);
  }
}

function rawOnly(datatype: DataType, origin: TensorOrigin): InferenceError {
  return invalid(`${datatype} data of input tensor '${origin.inputName}' for model '${origin.modelName}' can only be sent in raw_input_contents`);
}

/**
 * Typed `contents` -> the core's little-endian bytes (BYTES length-prefixed), with Triton's rules: exactly the
 * field that matches the datatype may hold data. An empty `contents` gives an empty tensor, which the core
 * then measures against the shape.
 */
export function typedContentsToBytes(datatype: DataType, contents: InferTensorContents__Output, origin: TensorOrigin): Uint8Array {
  let supplied = false;
  for (const { field, datatypes } of CONTENTS_FIELDS) {
    if (contents[field].length === 0) continue;
    if (supplied) {
      throw invalid(`unexpected explicit tensor data for input tensor '${origin.inputName}' for model '${origin.modelName}', binary data was already supplied.`);
    }
    if (!datatypes.includes(datatype)) {
      throw invalid(`unexpected explicit tensor data for input tensor '${origin.inputName}' for model '${origin.modelName}' of type '${datatypes.at(-1)}', expected datatype '${datatype}'`);
    }
    supplied = true;
  }
  if (supplied) return encodeElements(datatype, contents, origin);
  if (datatype === "FP16" || datatype === "BF16") throw rawOnly(datatype, origin);
  return new Uint8Array(0);
}

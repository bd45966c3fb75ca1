import { fromFloat16Array, toFloat16Array } from "../../protocol/float16";
import { DATA_TYPE, type OnnxTensor } from "./onnx-model";

function copyBytes(bytes: Uint8Array): ArrayBuffer {
  // raw_data may be a view into the decoded file at any offset: copy so that typed views are aligned.
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return copy.buffer;
}

function hasRawData(tensor: OnnxTensor): tensor is OnnxTensor & { raw_data: Uint8Array } {
  return tensor.raw_data !== undefined && tensor.raw_data.byteLength > 0;
}

/** The element count of a shape (1 for a scalar). */
export function elementCount(dims: readonly number[]): number {
  return dims.reduce((product, dim) => product * dim, 1);
}

/**
 * The values of a FLOAT, FLOAT16 or DOUBLE tensor as float32, from `raw_data` (little-endian) or the typed field
 * ONNX assigns that type (`float_data`; FLOAT16 bits in `int32_data`; `double_data`). Throws for other types.
 */
export function floatValues(tensor: OnnxTensor): Float32Array {
  switch (tensor.data_type) {
    case DATA_TYPE.FLOAT:
      return hasRawData(tensor) ? new Float32Array(copyBytes(tensor.raw_data)) : Float32Array.from(tensor.float_data);
    case DATA_TYPE.FLOAT16:
      return fromFloat16Array(hasRawData(tensor) ? new Uint16Array(copyBytes(tensor.raw_data)) : Uint16Array.from(tensor.int32_data));
    case DATA_TYPE.DOUBLE:
      return Float32Array.from(hasRawData(tensor) ? new Float64Array(copyBytes(tensor.raw_data)) : tensor.double_data);
    default:
      throw new Error(`tensor ${tensor.name}: data type ${tensor.data_type} is not a floating-point type`);
  }
}

/** The values of an INT8, UINT8, INT32 or INT64 tensor as numbers. */
export function integerValues(tensor: OnnxTensor): number[] {
  const raw = hasRawData(tensor) ? copyBytes(tensor.raw_data) : undefined;
  switch (tensor.data_type) {
    case DATA_TYPE.INT8: return raw ? [...new Int8Array(raw)] : tensor.int32_data;
    case DATA_TYPE.UINT8: return raw ? [...new Uint8Array(raw)] : tensor.int32_data;
    case DATA_TYPE.INT32: return raw ? [...new Int32Array(raw)] : tensor.int32_data;
    case DATA_TYPE.INT64: return raw ? [...new BigInt64Array(raw)].map(Number) : tensor.int64_data;
    default: throw new Error(`tensor ${tensor.name}: data type ${tensor.data_type} is not an integer type`);
  }
}

type RawArray = Float32Array | Uint16Array | Int8Array | Uint8Array | Int32Array | BigInt64Array;

function tensorOf(name: string, dims: readonly number[], dataType: number, data: RawArray): OnnxTensor {
  if (data.length !== elementCount(dims)) throw new Error(`tensor ${name}: ${data.length} values do not fill [${dims.join(",")}]`);
  return {
    name, dims: [...dims], data_type: dataType,
    raw_data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
    float_data: [], int32_data: [], int64_data: [], double_data: [], uint64_data: [], string_data: [],
  };
}

export function floatTensor(name: string, dims: readonly number[], values: Float32Array): OnnxTensor {
  return tensorOf(name, dims, DATA_TYPE.FLOAT, values);
}

/** FLOAT16, each value rounded to the nearest half (ties to even). */
export function float16Tensor(name: string, dims: readonly number[], values: Float32Array): OnnxTensor {
  return tensorOf(name, dims, DATA_TYPE.FLOAT16, toFloat16Array(values));
}

export function int8Tensor(name: string, dims: readonly number[], values: Int8Array): OnnxTensor {
  return tensorOf(name, dims, DATA_TYPE.INT8, values);
}

export function uint8Tensor(name: string, dims: readonly number[], values: Uint8Array): OnnxTensor {
  return tensorOf(name, dims, DATA_TYPE.UINT8, values);
}

export function int32Tensor(name: string, dims: readonly number[], values: Int32Array): OnnxTensor {
  return tensorOf(name, dims, DATA_TYPE.INT32, values);
}

export function int64Tensor(name: string, dims: readonly number[], values: readonly number[]): OnnxTensor {
  return tensorOf(name, dims, DATA_TYPE.INT64, BigInt64Array.from(values, BigInt));
}

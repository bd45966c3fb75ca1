import { isDataType } from "../../../protocol/datatypes";
import { bytesElementOffsets, joinBytesElements } from "../../../protocol/tensor-bytes";
import type { BackendTensor } from "../backend";
import type { DataType, OutputTensor, Tensor } from "./typescript-model";

type TypedArray =
  | Uint8Array | Int8Array | Uint16Array | Int16Array | Uint32Array | Int32Array | BigUint64Array | BigInt64Array
  | Float32Array | Float64Array;

type TypedArrayConstructor = { new (buffer: ArrayBufferLike, byteOffset: number, length: number): TypedArray; readonly BYTES_PER_ELEMENT: number };

/** The typed array each fixed-size datatype travels in (FP16 and BF16 as their bit patterns). */
const ARRAY_OF: Readonly<Record<Exclude<DataType, "BYTES">, TypedArrayConstructor>> = {
  BOOL: Uint8Array, UINT8: Uint8Array, UINT16: Uint16Array, UINT32: Uint32Array, UINT64: BigUint64Array,
  INT8: Int8Array, INT16: Int16Array, INT32: Int32Array, INT64: BigInt64Array,
  FP16: Uint16Array, FP32: Float32Array, FP64: Float64Array, BF16: Uint16Array,
};

/** The core's bytes as the model sees them: typed views over the same memory (copied only when misaligned). */
export function modelTensor(tensor: BackendTensor): Tensor {
  const shape = [...tensor.shape];
  if (tensor.datatype === "BYTES") {
    const offsets = bytesElementOffsets(tensor.data);
    const elements = offsets.slice(1).map((end, i) => tensor.data.subarray(offsets[i]! + 4, end));
    return { datatype: "BYTES", shape, data: elements };
  }
  if (!isDataType(tensor.datatype) || tensor.datatype === "BYTES") throw new Error(`unknown datatype ${tensor.datatype}`);
  const View = ARRAY_OF[tensor.datatype];
  const bytes = tensor.data.byteOffset % View.BYTES_PER_ELEMENT === 0 ? tensor.data : tensor.data.slice();
  const data = new View(bytes.buffer, bytes.byteOffset, bytes.byteLength / View.BYTES_PER_ELEMENT);
  return { datatype: tensor.datatype, shape, data } as Tensor;
}

const utf8 = new TextEncoder();

function elementCount(shape: readonly number[]): number {
  return shape.reduce((product, dim) => product * dim, 1);
}

/**
 * A tensor a model returned, as the core's bytes in a buffer of their own (added to `transfer`): the model's arrays
 * are copied, never moved, so a model may keep and reuse them. Throws, saying what is wrong, when it is not a
 * tensor of the kind its datatype names (another typed array, a length that does not match the shape).
 */
export function backendTensor(tensor: OutputTensor, transfer: ArrayBuffer[]): BackendTensor {
  const { datatype, shape, data } = tensor as { datatype: unknown; shape: unknown; data: unknown };
  if (!isDataType(datatype)) throw new Error(`has no valid datatype (got ${JSON.stringify(datatype)})`);
  if (!Array.isArray(shape) || !shape.every((dim) => Number.isSafeInteger(dim) && dim >= 0)) {
    throw new Error(`has no valid shape (an array of non-negative integers; got ${JSON.stringify(shape)})`);
  }
  const count = elementCount(shape);
  if (datatype === "BYTES") {
    if (!Array.isArray(data)) throw new Error("is BYTES, so its data must be an array of Uint8Array or string elements");
    if (data.length !== count) throw new Error(`has ${data.length} elements, but its shape [${shape.join(",")}] needs ${count}`);
    const elements = data.map((element: unknown, index) => {
      if (typeof element === "string") return utf8.encode(element);
      if (element instanceof Uint8Array) return element;
      throw new Error(`BYTES element ${index} is neither a Uint8Array nor a string`);
    });
    const joined = joinBytesElements(elements);
    transfer.push(joined.buffer as ArrayBuffer);
    return { datatype, shape, data: joined };
  }
  const View = ARRAY_OF[datatype];
  if (!(data instanceof View)) throw new Error(`is ${datatype}, so its data must be a ${View.name}`);
  if (data.length !== count) throw new Error(`has ${data.length} elements, but its shape [${shape.join(",")}] needs ${count}`);
  const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice();
  transfer.push(bytes.buffer);
  return { datatype, shape, data: bytes };
}

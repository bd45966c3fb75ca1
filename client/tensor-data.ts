import { type DataType, ELEMENT_BYTE_SIZE } from "../protocol/datatypes";

/**
 * The typed array that holds each KServe v2 datatype on the client. FP16 and BF16 are the raw 16-bit patterns
 * (JavaScript has no half floats), BOOL is one byte per element (0 or 1), BYTES is one `Uint8Array` per element.
 * Multi-byte elements are in host byte order, which is little-endian on every platform Node.js ships for.
 */
export interface TensorDataByType {
  BOOL: Uint8Array;
  UINT8: Uint8Array;
  UINT16: Uint16Array;
  UINT32: Uint32Array;
  UINT64: BigUint64Array;
  INT8: Int8Array;
  INT16: Int16Array;
  INT32: Int32Array;
  INT64: BigInt64Array;
  FP16: Uint16Array;
  BF16: Uint16Array;
  FP32: Float32Array;
  FP64: Float64Array;
  BYTES: Uint8Array[];
}

/** Tensor contents as the client hands them out: see {@link TensorDataByType}. */
export type TensorData = TensorDataByType[DataType];

/** A fixed-size-element typed array (everything but BYTES). */
export type NumericTensorData = Exclude<TensorData, Uint8Array[]>;

/** Plain JavaScript values a caller may pass instead of a typed array; converted with {@link toTensorData}. */
export type PlainTensorValues = readonly (number | bigint)[] | readonly boolean[] | readonly string[];

type NumericDataType = Exclude<DataType, "BYTES">;

interface TypedArrayConstructorOf<T extends NumericTensorData> {
  new (length: number): T;
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): T;
  readonly BYTES_PER_ELEMENT: number;
}

const CONSTRUCTORS: { readonly [K in NumericDataType]: TypedArrayConstructorOf<TensorDataByType[K]> } = {
  BOOL: Uint8Array, UINT8: Uint8Array, UINT16: Uint16Array, UINT32: Uint32Array, UINT64: BigUint64Array,
  INT8: Int8Array, INT16: Int16Array, INT32: Int32Array, INT64: BigInt64Array,
  FP16: Uint16Array, BF16: Uint16Array, FP32: Float32Array, FP64: Float64Array,
};

const encoder = new TextEncoder();

/** Number of elements a shape holds (1 for a scalar shape `[]`). */
export function elementCountOf(shape: readonly number[]): number {
  return shape.reduce((product, dim) => product * dim, 1);
}

/**
 * The datatype a typed array implies when the caller gave none. `Uint8Array` reads as UINT8 and `Uint16Array`
 * as UINT16: BOOL, FP16 and BF16 must be named explicitly.
 */
export function inferDataType(data: TensorData | PlainTensorValues): DataType | undefined {
  if (Array.isArray(data)) {
    const first: unknown = data[0];
    if (typeof first === "string" || first instanceof Uint8Array) return "BYTES";
    if (typeof first === "boolean") return "BOOL";
    return undefined;
  }
  if (data instanceof Float32Array) return "FP32";
  if (data instanceof Float64Array) return "FP64";
  if (data instanceof Int32Array) return "INT32";
  if (data instanceof BigInt64Array) return "INT64";
  if (data instanceof Uint8Array) return "UINT8";
  if (data instanceof Int8Array) return "INT8";
  if (data instanceof Int16Array) return "INT16";
  if (data instanceof Uint16Array) return "UINT16";
  if (data instanceof Uint32Array) return "UINT32";
  if (data instanceof BigUint64Array) return "UINT64";
  return undefined;
}

function isTypedArrayOf(datatype: DataType, data: unknown): boolean {
  if (datatype === "BYTES") return Array.isArray(data) && data.every((element) => element instanceof Uint8Array);
  return data instanceof CONSTRUCTORS[datatype];
}

/**
 * Brings caller-supplied values into the typed form of `datatype`: typed arrays of the right kind pass through
 * untouched, plain arrays are converted (strings to UTF-8 for BYTES, booleans to 0/1 for BOOL). Throws a
 * `TypeError` naming the tensor when the values do not fit.
 */
export function toTensorData<T extends DataType>(datatype: T, data: TensorData | PlainTensorValues, tensorName: string): TensorDataByType[T] {
  if (isTypedArrayOf(datatype, data)) return data as TensorDataByType[T];
  if (!Array.isArray(data)) {
    throw new TypeError(`tensor '${tensorName}': a ${data.constructor.name} cannot carry ${datatype} data`);
  }
  const values = data as readonly unknown[];
  if (datatype === "BYTES") {
    return values.map((value) => {
      if (typeof value === "string") return encoder.encode(value);
      if (value instanceof Uint8Array) return value;
      throw new TypeError(`tensor '${tensorName}': BYTES elements must be strings or Uint8Arrays, got ${typeof value}`);
    }) as TensorDataByType[T];
  }
  const out = new CONSTRUCTORS[datatype as NumericDataType](values.length);
  const wantsBigInt = datatype === "INT64" || datatype === "UINT64";
  values.forEach((value, index) => {
    if (datatype === "BOOL" && typeof value === "boolean") {
      out[index] = value ? 1 : 0;
    } else if (wantsBigInt && (typeof value === "bigint" || (typeof value === "number" && Number.isInteger(value)))) {
      out[index] = BigInt(value);
    } else if (!wantsBigInt && typeof value === "number") {
      out[index] = value;
    } else {
      throw new TypeError(`tensor '${tensorName}': element ${index} (${String(value)}) is not a ${datatype} value`);
    }
  });
  return out as TensorDataByType[T];
}

/** Little-endian wire bytes of a tensor, as the binary extension and gRPC raw contents carry them. */
export function tensorDataToBytes(datatype: DataType, data: TensorData): Uint8Array {
  if (datatype === "BYTES") {
    const elements = data as Uint8Array[];
    const out = new Uint8Array(elements.reduce((total, element) => total + 4 + element.byteLength, 0));
    const view = new DataView(out.buffer);
    let offset = 0;
    for (const element of elements) {
      view.setUint32(offset, element.byteLength, true);
      out.set(element, offset + 4);
      offset += 4 + element.byteLength;
    }
    return out;
  }
  const typed = data as NumericTensorData;
  return new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength);
}

/**
 * Wire bytes -> the typed array of `datatype`. The result is a view on `bytes` when the offset is aligned for
 * the element size and a copy otherwise (a tensor that follows a JSON header rarely starts aligned).
 */
export function bytesToTensorData<T extends DataType>(datatype: T, bytes: Uint8Array, tensorName: string): TensorDataByType[T] {
  if (datatype === "BYTES") {
    const elements: Uint8Array[] = [];
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let offset = 0; offset < bytes.byteLength;) {
      if (offset + 4 > bytes.byteLength) throw new RangeError(`tensor '${tensorName}': BYTES data ends inside a length prefix`);
      const length = view.getUint32(offset, true);
      if (offset + 4 + length > bytes.byteLength) throw new RangeError(`tensor '${tensorName}': a BYTES element overruns the data`);
      elements.push(bytes.subarray(offset + 4, offset + 4 + length));
      offset += 4 + length;
    }
    return elements as TensorDataByType[T];
  }
  const size = ELEMENT_BYTE_SIZE[datatype];
  if (bytes.byteLength % size !== 0) {
    throw new RangeError(`tensor '${tensorName}': ${bytes.byteLength} bytes is not a whole number of ${datatype} elements`);
  }
  // new Uint8Array(view) copies; Buffer#slice would not.
  const aligned = bytes.byteOffset % size === 0 ? bytes : new Uint8Array(bytes);
  const Constructor = CONSTRUCTORS[datatype as NumericDataType];
  return new Constructor(aligned.buffer, aligned.byteOffset, aligned.byteLength / size) as TensorDataByType[T];
}


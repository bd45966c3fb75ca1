import { bytesElementTexts, type DataType, ELEMENT_BYTE_SIZE, InferenceError, joinBytesStrings } from "../../core/index";
import { jsonText } from "./exact-json";

const INTEGER_RANGES: Partial<Record<DataType, readonly [number, number]>> = {
  UINT8: [0, 255], UINT16: [0, 65535], UINT32: [0, 4294967295], INT8: [-128, 127], INT16: [-32768, 32767],
  INT32: [-2147483648, 2147483647],
};

function invalid(message: string): InferenceError {
  return new InferenceError("INVALID_ARG", message);
}

/** Triton's HTTP_MAX_JSON_NESTING_DEPTH (src/common.h): `data` itself is depth 0, its elements one deeper. */
const MAX_JSON_NESTING_DEPTH = 100;

function tooDeep(): InferenceError {
  return invalid(`JSON nesting depth exceeds maximum allowed limit (${MAX_JSON_NESTING_DEPTH})`);
}

/** How many elements Triton's nested-or-flat JSON `data` holds (a scalar is one). */
function countElements(data: unknown, depth = 0): number {
  if (!Array.isArray(data)) return 1;
  // As Triton's ReadDataFromJsonHelper, a value at the limit's depth is refused, an array's or an element's.
  if (depth + 1 >= MAX_JSON_NESTING_DEPTH && data.length > 0) throw tooDeep();
  let count = 0;
  for (const item of data) count += Array.isArray(item) ? countElements(item, depth + 1) : 1;
  return count;
}

/**
 * Calls `visit` with each element of `data` in row-major order and its index, without copying the elements into
 * one more array: that copy boxed every double of a large FP tensor (16M NaN cost ~400 MB more).
 */
function forEachElement(data: unknown, visit: (value: unknown, index: number) => void, start = 0): number {
  if (!Array.isArray(data)) {
    visit(data, start);
    return start + 1;
  }
  let index = start;
  for (const item of data) {
    if (Array.isArray(item)) index = forEachElement(item, visit, index);
    else visit(item, index++);
  }
  return index;
}

type Writer = (view: DataView, offset: number, value: unknown) => void;

/** Writes one JSON element (a number, or a bigint for a long integer: exact-json.ts) at a byte offset, checking its type and range. */
export function numberWriter(datatype: DataType, tensorName: string): Writer {
  const bad = (value: unknown): InferenceError =>
    invalid(`unable to parse 'data' of input '${tensorName}': expected ${datatype} elements, got ${jsonText(value)}`);
  const range = INTEGER_RANGES[datatype];
  const integer = (value: unknown): number => {
    if (typeof value !== "number" || !Number.isInteger(value)) throw bad(value);
    if (range !== undefined && (value < range[0] || value > range[1])) throw bad(value);
    return value;
  };
  // 64-bit values arrive as bigint when they are too long for a double (see exact-json.ts).
  const long = (value: unknown, min: bigint, max: bigint): bigint => {
    const big = typeof value === "bigint" ? value : BigInt(integer(value));
    if (big < min || big > max) throw bad(value);
    return big;
  };
  const number = (value: unknown): number => {
    if (typeof value === "bigint") return Number(value);
    if (typeof value !== "number") throw bad(value);
    return value;
  };
  switch (datatype) {
    case "BOOL": return (v, o, value) => {
      // TritonJson's words (ReadDataFromJsonHelper's AsBool); the numeric types keep theirs, which Triton has no range check for.
      if (typeof value !== "boolean") throw invalid("attempt to access JSON non-boolean as boolean");
      v.setUint8(o, value ? 1 : 0);
    };
    case "UINT8": return (v, o, value) => v.setUint8(o, integer(value));
    case "INT8": return (v, o, value) => v.setInt8(o, integer(value));
    case "UINT16": return (v, o, value) => v.setUint16(o, integer(value), true);
    case "INT16": return (v, o, value) => v.setInt16(o, integer(value), true);
    case "UINT32": return (v, o, value) => v.setUint32(o, integer(value), true);
    case "INT32": return (v, o, value) => v.setInt32(o, integer(value), true);
    case "UINT64": return (v, o, value) => v.setBigUint64(o, long(value, 0n, 2n ** 64n - 1n), true);
    case "INT64": return (v, o, value) => v.setBigInt64(o, long(value, -(2n ** 63n), 2n ** 63n - 1n), true);
    case "FP32": return (v, o, value) => v.setFloat32(o, number(value), true);
    case "FP64": return (v, o, value) => v.setFloat64(o, number(value), true);
    // Triton's words (src/http_server.cc, ReadDataFromJson): the name unquoted.
    default: throw invalid(`receiving ${datatype} data via JSON is not supported. Please use the binary data format for input ${tensorName}`);
  }
}

export function assertElementCount(count: number, elementCount: number, tensorName: string): void {
  if (count !== elementCount) {
    throw invalid(`unexpected number of elements for input '${tensorName}': its shape has ${elementCount}, the data has ${count}`);
  }
}

/** JSON `data` (nested or flat) -> the core's little-endian bytes, checking every element's type and range. */
export function encodeJsonData(datatype: DataType, data: unknown, elementCount: number, tensorName: string): Uint8Array {
  const count = countElements(data);
  assertElementCount(count, elementCount, tensorName);
  if (datatype === "BYTES") {
    const texts = new Array<string>(count);
    forEachElement(data, (value, i) => {
      // Triton's words (src/http_server.cc, JsonBytesArrayByteSize), which name neither the input nor the value.
      if (typeof value !== "string") throw invalid("Unable to parse JSON bytes array: attempt to access JSON non-string as string");
      texts[i] = value;
    });
    return joinBytesStrings(texts);
  }
  const size = ELEMENT_BYTE_SIZE[datatype];
  const write = numberWriter(datatype, tensorName);
  const out = new Uint8Array(count * size);
  const view = new DataView(out.buffer);
  forEachElement(data, (value, i) => write(view, i * size, value));
  return out;
}

/**
 * A double as Triton's rapidjson Writer prints it (dtoa, with kWriteNanAndInfFlag): the shortest digits that
 * read back exactly, like JavaScript's, but `-0.0` keeps its sign, integral values end in `.0`, exponents carry
 * no `+`, and NaN and infinities are written by name (Python's json module, which tritonclient uses, reads them).
 */
function formatDouble(value: number): string {
  if (value === 0) return Object.is(value, -0) ? "-0.0" : "0.0";
  if (!Number.isFinite(value)) return Number.isNaN(value) ? "NaN" : value > 0 ? "Infinity" : "-Infinity";
  const text = String(value);
  if (text.includes("e")) return text.replace("e+", "e");
  return text.includes(".") ? text : `${text}.0`;
}

/** Elements formatted per slice of a large JSON output: a few milliseconds of work, after which others may run. */
export const JSON_SLICE_ELEMENTS = 16_384;

function elementReader(datatype: DataType, data: Uint8Array): (i: number) => string {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  switch (datatype) {
    case "BOOL": return (i) => (view.getUint8(i) ? "true" : "false");
    case "UINT8": return (i) => String(view.getUint8(i));
    case "INT8": return (i) => String(view.getInt8(i));
    case "UINT16": return (i) => String(view.getUint16(i * 2, true));
    case "INT16": return (i) => String(view.getInt16(i * 2, true));
    case "UINT32": return (i) => String(view.getUint32(i * 4, true));
    case "INT32": return (i) => String(view.getInt32(i * 4, true));
    case "UINT64": return (i) => String(view.getBigUint64(i * 8, true));
    case "INT64": return (i) => String(view.getBigInt64(i * 8, true));
    case "FP32": return (i) => formatDouble(view.getFloat32(i * 4, true));
    case "FP64": return (i) => formatDouble(view.getFloat64(i * 8, true));
    // Triton's words (src/http_server.cc, WriteDataToJson), which do not name the output.
    default: throw invalid(`sending ${datatype} data via JSON is not supported. Please use the binary data format for output`);
  }
}

/**
 * The core's bytes -> a JSON array literal (flat, as Triton writes it), in pieces of at most
 * {@link JSON_SLICE_ELEMENTS} elements, so a caller can stop between them. Built as text so that 64-bit
 * integers keep every digit. Throws (before the first piece) for datatypes JSON cannot carry.
 */
export function jsonDataText(datatype: DataType, data: Uint8Array, elementCount: number, tensorName: string): Iterable<string> {
  if (datatype === "BYTES") {
    const elements = bytesElementTexts(data, elementCount, tensorName);
    return slices(elementCount, (start, end) => elements.slice(start, end).map((text) => JSON.stringify(text)));
  }
  const read = elementReader(datatype, data);
  return slices(elementCount, (start, end) => {
    const parts = new Array<string>(end - start);
    for (let i = start; i < end; i++) parts[i - start] = read(i);
    return parts;
  });
}

function* slices(elementCount: number, format: (start: number, end: number) => string[]): Generator<string> {
  yield "[";
  for (let start = 0; start < elementCount; start += JSON_SLICE_ELEMENTS) {
    const end = Math.min(elementCount, start + JSON_SLICE_ELEMENTS);
    yield (start === 0 ? "" : ",") + format(start, end).join(",");
  }
  yield "]";
}

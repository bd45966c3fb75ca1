import { type DataType, ELEMENT_BYTE_SIZE, InferenceError } from "../../core/index";
import { jsonText } from "./exact-json";

const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

function invalid(message: string): InferenceError {
  return new InferenceError("INVALID_ARG", message);
}

/**
 * An input's `shape` as Triton's HTTP frontend reads it: each dimension an unsigned 64-bit integer (TritonJson's
 * IndexAsUInt, whose words a negative, fractional or non-numeric one gets). Exact: a dimension past 2^53 stays a bigint.
 */
export function jsonShape(value: unknown, name: string): bigint[] {
  if (!Array.isArray(value)) throw invalid(`input '${name}' must have a 'shape' array`);
  return value.map((dim) => {
    const exact = typeof dim === "number" && Number.isInteger(dim) ? BigInt(dim) : dim;
    if (typeof exact !== "bigint" || exact < 0n || exact > UINT64_MAX) {
      throw invalid("Unable to parse 'shape': attempt to access JSON non-unsigned-integer as unsigned-integer");
    }
    return exact;
  });
}

/**
 * The element count of an input whose data is JSON checked as Triton checks it before reading the data
 * (src/http_server.cc, ParseJsonTritonIO with common.cc's GetElementCount): a dimension beyond int64, an element
 * count beyond int64, or (for fixed-size types) a byte size beyond int64 is refused in Triton's words.
 */
export function checkJsonElementCount(shape: readonly bigint[], datatype: DataType, name: string): void {
  const shapeText = `[${shape.map((dim) => BigInt.asIntN(64, dim)).join(",")}]`;
  if (shape.some((dim) => dim > INT64_MAX)) throw invalid(`invalid shape for input '${name}': shape ${shapeText} contains one or more invalid dimensions`);
  if (shape.includes(0n)) return;
  const count = shape.reduce((product, dim) => product * dim, 1n);
  if (count > INT64_MAX) {
    throw invalid(`invalid shape for input '${name}': shape ${shapeText} causes total element count to exceed maximum size of ${INT64_MAX}`);
  }
  const size = BigInt(ELEMENT_BYTE_SIZE[datatype]);
  if (size > 1n && count * size > INT64_MAX) {
    throw invalid(
      `byte size overflow for input '${name}': element count (${count}) * data type size (${size}) exceeds maximum allowed size (${INT64_MAX})`,
    );
  }
}

/** The shape as the core takes it: past Triton's checks, a dimension no JavaScript number holds exactly is refused. */
export function safeShape(shape: readonly bigint[], name: string): number[] {
  return shape.map((dim) => {
    if (dim > BigInt(Number.MAX_SAFE_INTEGER)) throw invalid(`input '${name}' has a dimension ${jsonText(dim)} beyond 2^53 in its shape`);
    return Number(dim);
  });
}

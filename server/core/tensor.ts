import type { DataType } from "./datatypes";
import { invalidArg } from "./errors";

export { joinBytesElements } from "../tensor-bytes";

/**
 * A tensor as the core sees it, whatever the transport: row-major little-endian bytes; BYTES elements are each
 * a 4-byte little-endian length followed by the bytes (Triton's own serialization).
 */
export interface Tensor {
  readonly name: string;
  readonly datatype: DataType;
  readonly shape: readonly number[];
  readonly data: Uint8Array;
}

export function elementCount(shape: readonly number[]): number {
  let count = 1;
  for (const dim of shape) count *= dim;
  return count;
}

/** Splits a BYTES payload into its elements; throws INVALID_ARG when the length prefixes do not add up. */
export function splitBytesElements(data: Uint8Array, expectedCount: number, tensorName: string): Uint8Array[] {
  const elements: Uint8Array[] = [];
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let offset = 0;
  while (offset < data.byteLength) {
    if (offset + 4 > data.byteLength) {
      throw invalidArg(`unexpected end of BYTES data for input '${tensorName}': incomplete 4-byte length prefix`);
    }
    const length = view.getUint32(offset, true);
    offset += 4;
    if (offset + length > data.byteLength) {
      throw invalidArg(`unexpected end of BYTES data for input '${tensorName}': element of ${length} bytes overruns the payload`);
    }
    elements.push(data.subarray(offset, offset + length));
    offset += length;
  }
  if (elements.length !== expectedCount) {
    throw invalidArg(`input '${tensorName}' holds ${elements.length} BYTES elements, but its shape needs ${expectedCount}`);
  }
  return elements;
}

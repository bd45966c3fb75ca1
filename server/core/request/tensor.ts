import type { DataType } from "../../../protocol/datatypes";
import { invalidArg } from "../errors";

export { joinBytesElements, joinBytesStrings } from "../../../protocol/tensor-bytes";

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

/**
 * Checks a BYTES payload without materializing its elements: the 4-byte length prefixes must add up exactly to
 * `expectedCount` elements, none longer than `maxElementBytes`. Throws INVALID_ARG, stopping at the first fault.
 */
export function checkBytesElements(data: Uint8Array, expectedCount: number, tensorName: string, maxElementBytes: number): void {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let count = 0;
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
    if (length > maxElementBytes) {
      throw invalidArg(`BYTES element ${count} of input '${tensorName}' has ${length} bytes, more than the ${maxElementBytes} allowed (--max-bytes-element-size)`);
    }
    offset += length;
    if (++count > expectedCount) break;
  }
  if (count !== expectedCount) {
    const held = count > expectedCount ? `more than ${expectedCount}` : String(count);
    throw invalidArg(`input '${tensorName}' holds ${held} BYTES elements, but its shape needs ${expectedCount}`);
  }
}

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A BYTES output's elements, as views into `data`; throws INVALID_ARG when the payload does not hold exactly
 * `expectedCount` elements.
 */
export function bytesElements(data: Uint8Array, expectedCount: number, tensorName: string): Uint8Array[] {
  checkBytesElements(data, expectedCount, tensorName, Number.POSITIVE_INFINITY);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const elements: Uint8Array[] = [];
  for (let offset = 0; offset < data.byteLength;) {
    const end = offset + 4 + view.getUint32(offset, true);
    elements.push(data.subarray(offset + 4, end));
    offset = end;
  }
  return elements;
}

/**
 * A BYTES output's elements as UTF-8 text, for a JSON response; throws INVALID_ARG when the payload does not hold
 * exactly `expectedCount` elements, or when an element is not UTF-8: JSON text cannot carry arbitrary bytes, and
 * replacing them would hand the client other data than the model produced (binary_data carries any bytes).
 */
export function bytesElementTexts(data: Uint8Array, expectedCount: number, tensorName: string): string[] {
  return bytesElements(data, expectedCount, tensorName).map((element, index) => {
    try {
      return STRICT_UTF8.decode(element);
    } catch {
      throw invalidArg(`BYTES element ${index} of output '${tensorName}' is not valid UTF-8, which JSON cannot carry; request the output with "binary_data": true`);
    }
  });
}

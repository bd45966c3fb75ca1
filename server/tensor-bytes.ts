/**
 * Triton's BYTES serialization (each element a 4-byte little-endian length, then its bytes), shared by the core
 * and the backends. A leaf module with no imports.
 */

/** Length-prefixes each element and concatenates them. */
export function joinBytesElements(elements: readonly Uint8Array[]): Uint8Array {
  let total = 0;
  for (const element of elements) total += 4 + element.byteLength;
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  let offset = 0;
  for (const element of elements) {
    view.setUint32(offset, element.byteLength, true);
    out.set(element, offset + 4);
    offset += 4 + element.byteLength;
  }
  return out;
}

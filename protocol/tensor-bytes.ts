/**
 * Triton's BYTES serialization (each element a 4-byte little-endian length, then its bytes), shared by the core
 * and the backends. A leaf module with no imports.
 */

/**
 * Byte offsets where each element starts, followed by the end of the last one (n + 1 offsets for n elements).
 * Assumes well-formed data: the core validates client payloads before anything walks them.
 */
export function bytesElementOffsets(data: Uint8Array): number[] {
  const offsets = [0];
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  for (let offset = 0; offset + 4 <= data.byteLength;) {
    offset += 4 + view.getUint32(offset, true);
    offsets.push(offset);
  }
  return offsets;
}

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

/**
 * Each element's bytes decoded as UTF-8 text, read in place: no view or copy per element, so a tensor of
 * millions of short strings costs the strings and nothing more.
 */
export function bytesElementStrings(data: Uint8Array): string[] {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const texts: string[] = [];
  for (let offset = 0; offset + 4 <= bytes.byteLength;) {
    const end = offset + 4 + bytes.readUInt32LE(offset);
    texts.push(bytes.toString("utf8", offset + 4, end));
    offset = end;
  }
  return texts;
}

/**
 * Length-prefixes each text's UTF-8 bytes and concatenates them into one buffer, with no array per element. The
 * buffer is exactly sized and never pooled, so the result can be transferred to another thread as it is.
 */
export function joinBytesStrings(texts: readonly string[]): Uint8Array {
  let total = 0;
  for (const text of texts) total += 4 + Buffer.byteLength(text, "utf8");
  const out = Buffer.allocUnsafeSlow(total);
  let offset = 0;
  for (const text of texts) {
    const length = out.write(text, offset + 4, "utf8");
    out.writeUInt32LE(length, offset);
    offset += 4 + length;
  }
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

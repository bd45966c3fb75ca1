/** Bytes before each gRPC message: a compressed flag and a 4-byte big-endian length. */
export const PREFIX_BYTES = 5;

/** `body` as one length-prefixed gRPC message (its compressed flag, big-endian length, then the bytes), in one buffer. */
export function lengthPrefixed(body: Uint8Array, compressed: boolean): Buffer {
  const message = Buffer.allocUnsafe(PREFIX_BYTES + body.byteLength);
  message.writeUInt8(compressed ? 1 : 0, 0);
  message.writeUInt32BE(body.byteLength, 1);
  message.set(body, PREFIX_BYTES);
  return message;
}

/**
 * Follows the gRPC length-prefixed message framing of one direction of a stream, chunk by chunk as they arrive,
 * without keeping any of their bytes: it only tells whether a message has begun and not yet ended.
 */
export class GrpcMessageFraming {
  #prefixBytesSeen = 0;
  #announcedBytes = 0;
  #bodyBytesLeft = 0;

  /** True while a message has been received in part: its prefix, or some but not all of its body. */
  get partial(): boolean {
    return this.#prefixBytesSeen > 0 || this.#bodyBytesLeft > 0;
  }

  /** Takes the next chunk of the stream; returns how many messages it ended. */
  take(chunk: Uint8Array): number {
    let ended = 0;
    let offset = 0;
    while (offset < chunk.byteLength) {
      if (this.#bodyBytesLeft > 0) {
        const taken = Math.min(this.#bodyBytesLeft, chunk.byteLength - offset);
        this.#bodyBytesLeft -= taken;
        offset += taken;
        if (this.#bodyBytesLeft === 0) ended++;
        continue;
      }
      // Byte 0 is the compressed flag; bytes 1-4 the length.
      if (this.#prefixBytesSeen > 0) this.#announcedBytes = this.#announcedBytes * 256 + chunk[offset]!;
      this.#prefixBytesSeen++;
      offset++;
      if (this.#prefixBytesSeen === PREFIX_BYTES) {
        this.#bodyBytesLeft = this.#announcedBytes;
        this.#prefixBytesSeen = 0;
        this.#announcedBytes = 0;
        if (this.#bodyBytesLeft === 0) ended++;
      }
    }
    return ended;
  }
}

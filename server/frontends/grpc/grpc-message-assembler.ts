/** Bytes before each gRPC message: a compressed flag and a 4-byte big-endian length. */
const PREFIX_BYTES = 5;

/**
 * Reassembles the length-prefixed gRPC messages of one direction of a stream from its chunks, as grpc-js's
 * StreamDecoder does, into the same framed form (prefix included). grpc-js keeps a message's chunks (views of
 * nghttp2's ~16 KiB read buffers) until its last one arrives and then joins them: for a 64 MiB message, the chunks
 * and the joined copy are held at once, and the join is one synchronous 64 MiB copy (100-160 ms of main-thread time
 * on a busy 2-core machine) that health checks and every other call wait for. This copies each chunk into the
 * message as it arrives, into a buffer allocated from the message's length prefix, so the copying is spread over
 * the chunks' reads and no chunk outlives its read.
 */
export class GrpcMessageAssembler {
  readonly #prefix = Buffer.alloc(PREFIX_BYTES);
  #prefixBytesSeen = 0;
  #message: Buffer | undefined;
  #messageBytesSeen = 0;

  /** @param maxMessageBytes the longest message body accepted; -1 for no limit. */
  constructor(private readonly maxMessageBytes: number) {}

  /**
   * Takes the next chunk of the stream; returns the messages it completed, each with its 5-byte prefix. Throws
   * (with grpc-js's message, which it sends as RESOURCE_EXHAUSTED) when a prefix announces a message over the limit.
   */
  write(chunk: Buffer): Buffer[] {
    const messages: Buffer[] = [];
    let offset = 0;
    while (offset < chunk.byteLength) {
      if (this.#message === undefined) {
        const taken = Math.min(PREFIX_BYTES - this.#prefixBytesSeen, chunk.byteLength - offset);
        chunk.copy(this.#prefix, this.#prefixBytesSeen, offset, offset + taken);
        this.#prefixBytesSeen += taken;
        offset += taken;
        if (this.#prefixBytesSeen < PREFIX_BYTES) break;
        const length = this.#prefix.readUInt32BE(1);
        if (this.maxMessageBytes !== -1 && length > this.maxMessageBytes) {
          throw new Error(`Received message larger than max (${length} vs ${this.maxMessageBytes})`);
        }
        this.#message = Buffer.allocUnsafe(PREFIX_BYTES + length);
        this.#prefix.copy(this.#message, 0);
        this.#messageBytesSeen = PREFIX_BYTES;
        this.#prefixBytesSeen = 0;
      } else {
        const taken = Math.min(this.#message.byteLength - this.#messageBytesSeen, chunk.byteLength - offset);
        chunk.copy(this.#message, this.#messageBytesSeen, offset, offset + taken);
        this.#messageBytesSeen += taken;
        offset += taken;
      }
      if (this.#messageBytesSeen === this.#message.byteLength) {
        messages.push(this.#message);
        this.#message = undefined;
      }
    }
    return messages;
  }
}

import type { BudgetLease, RequestBytesBudget } from "../request-bytes-budget";
import { copyBytes } from "../../../common/copy-bytes";
import { requestBuffers } from "../request-buffers";
import { releaseMemoryNow } from "../release-memory";

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
 *
 * Each message holds its bytes against the in-flight budget as they arrive (not its announced length: a client that
 * announces much and sends little holds only what it sent), from its first byte until it is handed over, whole,
 * to be decompressed and decoded (which hold it again). The buffer is left uninitialised, so its pages take memory
 * only as the message's bytes are copied in; a mid-sized one comes from {@link requestBuffers}, to which
 * modelInfer gives it back once answered. A message refused (over the limit, or the budget full) ends the call;
 * what else its stream sends is dropped.
 */
export class GrpcMessageAssembler {
  readonly #prefix = Buffer.alloc(PREFIX_BYTES);
  #prefixBytesSeen = 0;
  #message: Buffer | undefined;
  #messageBytesSeen = 0;
  #lease: BudgetLease | undefined;
  #refused = false;

  /**
   * @param maxMessageBytes the longest message body accepted; -1 for no limit.
   * @param budget the server's in-flight budget, which each message holds as it arrives; none for a client's
   * reading of its responses.
   * @param overdraw hold the bytes even past the budget, never refusing them (a ModelStreamInfer call's messages).
   */
  constructor(private readonly maxMessageBytes: number, private readonly budget?: RequestBytesBudget, private readonly overdraw = false) {}

  /**
   * Takes the next chunk of the stream; returns the messages it completed, each with its 5-byte prefix. Throws
   * (with a message grpc-js sends as RESOURCE_EXHAUSTED) when a prefix announces a message over the limit, or the
   * budget cannot hold the bytes that arrived; then takes nothing more.
   */
  write(chunk: Buffer): Buffer[] {
    if (this.#refused) return [];
    try {
      return this.#assemble(chunk);
    } catch (error) {
      this.#refused = true;
      this.letGo();
      throw error;
    }
  }

  /**
   * Lets go of the message being assembled, part-way (refused, or its stream closed), and of its bytes in the
   * budget; its memory goes with them, not at a later collection, since others may take those bytes at once.
   */
  letGo(): void {
    if (this.#message !== undefined) releaseMemoryNow(this.#message.buffer);
    this.#handedOver();
  }

  /** The message is whole and handed over (or dropped): its bytes leave the budget with it. */
  #handedOver(): void {
    this.#lease?.release();
    this.#lease = undefined;
    this.#message = undefined;
  }

  #assemble(chunk: Buffer): Buffer[] {
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
        this.#lease = this.budget?.lease();
        if (!this.overdraw) this.#lease?.refuseIfNeverFits(PREFIX_BYTES + length);
        this.#message = requestBuffers.take(PREFIX_BYTES + length);
        copyBytes(this.#message, this.#prefix, 0);
        this.#messageBytesSeen = PREFIX_BYTES;
        this.#prefixBytesSeen = 0;
      } else {
        const taken = Math.min(this.#message.byteLength - this.#messageBytesSeen, chunk.byteLength - offset);
        if (this.overdraw) this.#lease?.overdrawAtLeast(this.#messageBytesSeen + taken);
        else this.#lease?.holdAtLeast(this.#messageBytesSeen + taken);
        copyBytes(this.#message, chunk.subarray(offset, offset + taken), this.#messageBytesSeen);
        this.#messageBytesSeen += taken;
        offset += taken;
      }
      if (this.#messageBytesSeen === this.#message.byteLength) {
        messages.push(this.#message);
        this.#handedOver();
      }
    }
    return messages;
  }
}

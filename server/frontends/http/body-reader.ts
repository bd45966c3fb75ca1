import type { FastifyRequest } from "fastify";
import { errorCodes } from "fastify";
import { InferenceError } from "../../core/index";
import { copyBytes } from "../../../common/copy-bytes";
import { requestBuffers } from "../request-buffers";
import { releaseMemoryNow } from "../release-memory";
import { budgetLeaseOf } from "./request-budget-hook";

type Done = (error: Error | null, body?: Buffer) => void;

/**
 * Triton's refusal of a request over --http-max-input-size (src/http_server.cc, a 400): in EVBufferToJson's words,
 * which Triton uses for every body it reads as JSON, or for a raw binary body (Inference-Header-Content-Length: 0)
 * in its raw input's. `bytes` is the announced length, or what a chunked body had sent when it went past the limit.
 */
function bodyTooLarge(request: FastifyRequest, bytes: number, limit: number): InferenceError {
  const advice = "Use --http-max-input-size to increase the limit.";
  return new InferenceError("INVALID_ARG", request.headers["inference-header-content-length"] === "0"
    ? `Raw input has a byte_size (${bytes} bytes) that exceeds the maximum allowed value of ${limit} bytes. ${advice}`
    : `request JSON size of ${bytes} bytes exceeds the maximum allowed input size of ${limit} bytes. ${advice}`);
}

/** A chunked body's blocks: at least release-memory.ts's smallest buffer, so that they can be freed at once. */
const BLOCK_BYTES = 1024 * 1024;

/** A chunked body as it arrives, copied into blocks of {@link BLOCK_BYTES}. */
class ChunkedBody {
  readonly #blocks: Buffer[] = [];
  #lastUsed = BLOCK_BYTES;

  append(bytes: Buffer): void {
    for (let offset = 0; offset < bytes.byteLength;) {
      if (this.#lastUsed === BLOCK_BYTES) {
        this.#blocks.push(Buffer.allocUnsafe(BLOCK_BYTES));
        this.#lastUsed = 0;
      }
      const copied = bytes.copy(this.#blocks.at(-1)!, this.#lastUsed, offset);
      this.#lastUsed += copied;
      offset += copied;
    }
  }

  /** The `bytes` appended, as one buffer. */
  joined(bytes: number): Buffer {
    const last = this.#blocks.length - 1;
    return Buffer.concat(this.#blocks.map((block, i) => (i === last ? block.subarray(0, this.#lastUsed) : block)), bytes);
  }

  /** Frees the blocks now (the body was joined, or refused). */
  letGo(): void {
    for (const block of this.#blocks) releaseMemoryNow(block.buffer);
    this.#blocks.length = 0;
  }
}

/**
 * The content-type parser of every body: reads it as one Buffer, refusing it past `limit` bytes (400, as Triton)
 * and when it does not match its Content-Length (400, as fastify). Each chunk is held against the request's
 * budget lease as it arrives, so a body is counted by what it sent, chunked or not (a chunked one twice once whole,
 * for the join of its blocks); one that the budget cannot hold is refused there (503, or 400 when larger than the
 * whole budget). Fastify answers a parser's error with `Connection: close`, so the rest of a refused body is not
 * read, and the memory of what was read goes at once (releaseMemoryNow), as its bytes leave the budget.
 *
 * A body that announces its length is read straight into a buffer of that size: fastify's own reader keeps every
 * chunk and copies them into one buffer at the end, twice a 64 MiB body's memory at its peak. A chunked body is
 * copied into blocks of 1 MiB, joined at its end: the socket's chunks, kept until then, were many small buffers
 * that only a garbage collection frees. Buffers are left uninitialised, so their pages take memory only as the
 * body's bytes are written into them; a mid-sized one comes from {@link requestBuffers}, to which the infer
 * route gives it back once answered.
 */
export function bodyReader(limit: number) {
  return (request: FastifyRequest, payload: NodeJS.ReadableStream, done: Done): void => {
    const declared = Number(request.headers["content-length"]);
    const lease = budgetLeaseOf(request);
    if (declared > limit) {
      done(bodyTooLarge(request, declared, limit));
      return;
    }
    const known = Number.isInteger(declared) && declared >= 0;
    try {
      if (known) lease?.refuseIfNeverFits(declared);
    } catch (error) {
      done(error as Error);
      return;
    }
    const whole = known ? requestBuffers.take(declared) : undefined;
    const blocks = new ChunkedBody();
    let received = 0;
    const finish = (error: Error | null, body?: Buffer): void => {
      payload.removeListener("data", onData);
      payload.removeListener("end", onEnd);
      payload.removeListener("error", onEnd);
      if (error !== null && whole !== undefined) releaseMemoryNow(whole.buffer);
      blocks.letGo();
      done(error, body);
    };
    function onData(chunk: Buffer | string): void {
      const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      const total = received + bytes.byteLength;
      if (whole !== undefined && total > whole.byteLength) {
        finish(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
        return;
      }
      if (total > limit) {
        finish(bodyTooLarge(request, total, limit));
        return;
      }
      try {
        lease?.holdAtLeast(total);
      } catch (error) {
        finish(error as Error);
        return;
      }
      if (whole === undefined) blocks.append(bytes);
      else copyBytes(whole, bytes, received);
      received = total;
    }
    function onEnd(error?: Error & { statusCode?: number }): void {
      if (error != null) {
        if (!(typeof error.statusCode === "number" && error.statusCode >= 400)) error.statusCode = 400;
        finish(error);
      } else if (whole !== undefined && received !== whole.byteLength) {
        finish(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
      } else if (whole !== undefined) {
        finish(null, whole);
      } else {
        try {
          // Joined, a chunked body is held twice a moment: the join is held beside its blocks.
          lease?.holdMore(received);
        } catch (error) {
          finish(error as Error);
          return;
        }
        finish(null, blocks.joined(received));
      }
    }
    payload.on("data", onData);
    payload.on("end", onEnd);
    payload.on("error", onEnd);
    payload.resume();
  };
}

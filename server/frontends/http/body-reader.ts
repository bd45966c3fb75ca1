import type { FastifyRequest } from "fastify";
import { errorCodes } from "fastify";
import { InferenceError } from "../../core/index";
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

/**
 * The content-type parser of every body: reads it as one Buffer, refusing it past `limit` bytes (400, as Triton)
 * and when it does not match its Content-Length (400, as fastify). Each chunk is held against the request's
 * budget lease as it arrives, so a body is counted by what it sent, chunked or not (a chunked one twice once whole,
 * for the join of its chunks); one that the budget cannot hold is refused there (503, or 400 when larger than the whole budget). Fastify answers a parser's error with
 * `Connection: close`, so the rest of a refused body is not read.
 *
 * A body that announces its length is read straight into a buffer of that size: fastify's own reader keeps every
 * chunk and copies them into one buffer at the end, twice a 64 MiB body's memory at its peak. The buffer is left
 * uninitialised, so its pages take memory only as the body's bytes are written into them.
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
    const whole = known ? Buffer.allocUnsafe(declared) : undefined;
    const chunks: Buffer[] = [];
    let received = 0;
    const finish = (error: Error | null, body?: Buffer): void => {
      payload.removeListener("data", onData);
      payload.removeListener("end", onEnd);
      payload.removeListener("error", onEnd);
      // Its bytes are given back to the budget with the refusal: its memory goes now, not at a later collection.
      if (error !== null && whole !== undefined) releaseMemoryNow(whole.buffer);
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
      if (whole === undefined) chunks.push(bytes);
      else bytes.copy(whole, received);
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
          // Joined, a chunked body's chunks are held twice a moment: the join is held beside them.
          lease?.holdMore(received);
        } catch (error) {
          finish(error as Error);
          return;
        }
        finish(null, Buffer.concat(chunks, received));
      }
    }
    payload.on("data", onData);
    payload.on("end", onEnd);
    payload.on("error", onEnd);
    payload.resume();
  };
}

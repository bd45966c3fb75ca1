import type { FastifyRequest } from "fastify";
import { errorCodes } from "fastify";

type Done = (error: Error | null, body?: Buffer) => void;

/**
 * The content-type parser of every body: reads it as one Buffer, refusing it past `limit` bytes as fastify does
 * (413, and 400 when it does not match its Content-Length). A body that announces its length is read straight
 * into a buffer of that size: fastify's own reader keeps every chunk and copies them into one buffer at the end,
 * twice a 64 MiB body's memory at its peak.
 */
export function bodyReader(limit: number) {
  return (request: FastifyRequest, payload: NodeJS.ReadableStream, done: Done): void => {
    const declared = Number(request.headers["content-length"]);
    if (declared > limit) {
      done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
      return;
    }
    const known = Number.isInteger(declared) && declared >= 0;
    const whole = known ? Buffer.allocUnsafe(declared) : undefined;
    const chunks: Buffer[] = [];
    let received = 0;
    const finish = (error: Error | null, body?: Buffer): void => {
      payload.removeListener("data", onData);
      payload.removeListener("end", onEnd);
      payload.removeListener("error", onEnd);
      done(error, body);
    };
    function onData(chunk: Buffer | string): void {
      const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      if (received + bytes.byteLength > (whole?.byteLength ?? limit)) {
        finish(whole === undefined ? new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE() : new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
        return;
      }
      if (whole === undefined) chunks.push(bytes);
      else bytes.copy(whole, received);
      received += bytes.byteLength;
    }
    function onEnd(error?: Error & { statusCode?: number }): void {
      if (error != null) {
        if (!(typeof error.statusCode === "number" && error.statusCode >= 400)) error.statusCode = 400;
        finish(error);
      } else if (whole !== undefined && received !== whole.byteLength) {
        finish(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
      } else {
        finish(null, whole ?? Buffer.concat(chunks, received));
      }
    }
    payload.on("data", onData);
    payload.on("end", onEnd);
    payload.on("error", onEnd);
    payload.resume();
  };
}

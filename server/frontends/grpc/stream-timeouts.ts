import { constants, type ServerHttp2Stream } from "node:http2";
import { status } from "@grpc/grpc-js";
import type { Logger } from "pino";
import { GrpcMessageFraming } from "./grpc-message-framing";

/** How long one call's stream waits on its client. 0 turns a timeout off. */
export interface StreamTimeouts {
  /**
   * A request must arrive within this: a unary call's message and its end from the moment the call opens, and
   * each message of a request stream (ModelStreamInfer) from its first byte to its last. Time the server takes
   * to read what the client sent does not count.
   */
  readonly requestTimeoutMs: number;
  /** Longest time a stream's response makes no progress towards its client. */
  readonly writeTimeoutMs: number;
  /** Whether the method at this path takes a stream of requests, between which its client owes nothing. */
  readonly isClientStreaming: (path: string) => boolean;
  readonly logger: Logger;
}

/**
 * Resets the stream of a call whose client keeps the server waiting: one that does not send its request in time
 * (answered DEADLINE_EXCEEDED where no response has begun, then RST_STREAM NO_ERROR so that it stops sending; else
 * RST_STREAM CANCEL), or one that takes nothing of its response for the write timeout (RST_STREAM CANCEL, which
 * frees the response the stream still held). While the server works on a call, neither runs: a model may take long.
 * Call from the HTTP/2 server's 'stream' event, after grpc-js's own listener.
 */
export function watchStreamTimeouts(stream: ServerHttp2Stream, path: string, timeouts: StreamTimeouts): void {
  if (timeouts.writeTimeoutMs > 0) watchWrites(stream, timeouts.writeTimeoutMs, timeouts.logger);
  if (timeouts.requestTimeoutMs > 0) watchRequest(stream, timeouts.requestTimeoutMs, timeouts.isClientStreaming(path), timeouts.logger);
}

function watchWrites(stream: ServerHttp2Stream, writeTimeoutMs: number, logger: Logger): void {
  // Node restarts a stream's timer whenever the stream reads or writes a chunk and, while it has data queued,
  // whenever its connection sends anything: it fires once writeTimeoutMs pass without progress.
  stream.setTimeout(writeTimeoutMs);
  stream.on("timeout", () => {
    // Nothing queued: the server is working, or the stream waits for its next request. Neither is the client's.
    if (stream.bufferSize === 0) return;
    logger.debug(`gRPC stream reset: its client took none of its response for ${writeTimeoutMs} ms (--grpc-write-timeout-ms)`);
    stream.close(constants.NGHTTP2_CANCEL);
  });
}

function watchRequest(stream: ServerHttp2Stream, requestTimeoutMs: number, clientStreaming: boolean, logger: Logger): void {
  let timer: NodeJS.Timeout | undefined;
  const stop = (): void => {
    clearTimeout(timer);
    timer = undefined;
  };
  const start = (): void => {
    timer ??= setTimeout(expire, requestTimeoutMs).unref();
  };
  const expire = (): void => {
    timer = undefined;
    if (stream.closed || stream.destroyed) return;
    // The server has answered (an error before the request was read whole): it needs nothing more of the client.
    if (stream.writableEnded) {
      stream.close(constants.NGHTTP2_NO_ERROR);
      return;
    }
    // The server is not reading (a stream with many requests in flight pauses), or has not read all it was sent:
    // the wait is the server's, not the client's.
    if (stream.isPaused() || stream.readableLength > 0) {
      start();
      return;
    }
    const details = `request not received in time: the whole request within ${requestTimeoutMs} ms (--grpc-request-timeout-ms)`;
    logger.debug(`gRPC stream reset: ${details}`);
    if (stream.headersSent) {
      stream.close(constants.NGHTTP2_CANCEL);
      return;
    }
    stream.respond({
      ":status": 200, "content-type": "application/grpc+proto", "grpc-status": String(status.DEADLINE_EXCEEDED), "grpc-message": encodeURI(details),
    }, { endStream: true });
    // Sent once the answer is: asks the client to stop sending without calling its request an error.
    stream.close(constants.NGHTTP2_NO_ERROR);
  };
  stream.once("end", stop);
  stream.once("close", stop);
  if (!clientStreaming) {
    start();
    return;
  }
  const framing = new GrpcMessageFraming();
  // grpc-js has paused the stream until its call asks for a message, so this listener does not make it flow.
  stream.on("data", (chunk: Buffer) => {
    if (framing.take(chunk) > 0) stop();
    if (framing.partial) start();
  });
}

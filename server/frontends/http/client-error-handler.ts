import type { Socket } from "node:net";

/** What Node's HTTP parser or its request timer reports about a connection, before any route is involved. */
interface ClientError extends Error {
  readonly code?: string;
  /** llhttp's reason for a parse error ("Invalid character in chunk size", ...). */
  readonly reason?: string;
}

const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: "Bad Request", 408: "Request Timeout", 413: "Payload Too Large", 431: "Request Header Fields Too Large",
};

/**
 * Answers a request the server could not read (malformed, too slow, headers too large) with Triton's
 * `{"error": "..."}` shape and closes the connection, instead of fastify's own JSON shape. `timeoutHint` says
 * which flags bound the time a request may take to arrive.
 */
export function clientErrorHandler(timeoutHint: string): (error: ClientError, socket: Socket) => void {
  return (error, socket) => {
    if (error.code === "ECONNRESET" || socket.destroyed) return;
    let status = 400;
    let message = `malformed HTTP request: ${error.reason ?? error.message}`;
    if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") {
      status = 408;
      message = `request not received in time: ${timeoutHint}`;
    } else if (error.code === "HPE_HEADER_OVERFLOW") {
      status = 431;
      message = "request header fields are too large";
    } else if (error.code === "HPE_CHUNK_EXTENSIONS_OVERFLOW") {
      status = 413;
      message = "request chunk extensions are too large";
    }
    const body = JSON.stringify({ error: message });
    if (socket.writable) {
      socket.write(`HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    }
    socket.destroy(error);
  };
}

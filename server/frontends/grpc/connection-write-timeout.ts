import type { ServerHttp2Session } from "node:http2";
import type { Socket } from "node:net";
import type { Logger } from "pino";

/**
 * Closes a connection whose client stops reading it altogether. A client that grants large HTTP/2 windows and then
 * reads nothing from its socket takes whole responses into the server's socket queue, where no stream timeout sees
 * them: their streams have written everything. So once a connection that had calls has been quiet for the write
 * timeout, the server pings it; a client that does not answer within the write timeout more reads nothing, and its
 * TCP connection (with everything queued for it) is destroyed. A connection without calls since its client last answered
 * is not pinged, so idle connections cost nothing; one whose call the server works on long is pinged once.
 */
export function watchConnectionWrites(session: ServerHttp2Session, tcpSocket: Socket, writeTimeoutMs: number, logger: Logger): void {
  // Calls opened since the client last answered a ping. Not their ends: a stream whose last frames wait behind a
  // socket the client does not read never ends.
  let callsSincePing = false;
  session.on("stream", () => {
    callsSincePing = true;
  });
  // Node restarts a session's timer whenever a frame arrives or one of its streams reads or writes.
  session.setTimeout(writeTimeoutMs);
  session.on("timeout", () => {
    if (!callsSincePing || session.destroyed) return;
    callsSincePing = false;
    const unanswered = setTimeout(() => {
      logger.debug(`gRPC connection closed: its client read nothing for ${writeTimeoutMs} ms (--grpc-write-timeout-ms)`);
      // Not session.destroy(): it waits for the socket's queued writes to finish, which is what never happens.
      tcpSocket.destroy();
    }, writeTimeoutMs).unref();
    // A session closing (GOAWAY sent) cancels the ping at once: grpc-js then ends the connection itself.
    if (session.ping(() => clearTimeout(unanswered)) === false) clearTimeout(unanswered);
  });
}

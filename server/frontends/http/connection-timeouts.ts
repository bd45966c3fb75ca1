import type { Server, Socket } from "node:net";

/**
 * Closes connections whose client keeps the server waiting: nothing received for the idle timeout while the
 * client owes a request (before its first byte, or part-way through headers or body), or nothing of a response
 * taken for the write timeout (a client that does not read). While the server itself works on a request (from
 * its complete body to its answer) the connection is not timed out: a model may take long.
 *
 * The server's socket timeout (fastify's connectionTimeout, set to the idle timeout) fires the checks; every
 * read or completed write restarts it. {@link answering} switches it to the write timeout, and Node sets the
 * keep-alive timeout once the response is done and the idle timeout again when the next request starts.
 */
export class ConnectionTimeouts {
  readonly #working = new WeakSet<Socket>();
  readonly #open = new Set<Socket>();

  constructor(server: Server, private readonly idleTimeoutMs: number, private readonly writeTimeoutMs: number) {
    server.on("timeout", (socket: Socket) => {
      if (!this.#working.has(socket)) socket.destroy();
    });
    server.on("connection", (socket: Socket) => {
      this.#open.add(socket);
      socket.once("close", () => this.#open.delete(socket));
    });
  }

  /**
   * Closes every connection but those whose request the server still works on (they get their answers): for a
   * shutdown past its deadline. An answer its client has not taken (an event stream ended by the shutdown, a large
   * response) counts as busy to Node, which would keep its connection up to the write timeout; a connection that
   * closed the server early would not stop to wait for it.
   */
  closeAllButWorking(): void {
    for (const socket of this.#open) if (!this.#working.has(socket)) socket.destroy();
  }

  /** The request on this connection has arrived whole and is being worked on: its client owes nothing now. */
  working(socket: Socket): void {
    this.#working.add(socket);
  }

  /** The response starts: from now on the client must take it. */
  answering(socket: Socket): void {
    this.#working.delete(socket);
    if (this.writeTimeoutMs !== this.idleTimeoutMs) socket.setTimeout(this.writeTimeoutMs);
  }
}

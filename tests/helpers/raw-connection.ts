import { connect, type Socket } from "node:net";

/** A raw TCP connection to a server that records what it received and when it was closed. */
export interface RawConnection {
  readonly socket: Socket;
  /** Everything the server sent. */
  received(): string;
  /** Resolves with the time (performance.now()) the connection closed. */
  readonly closed: Promise<number>;
}

/** Connects to 127.0.0.1:port and writes `first`, if given. */
export function openRaw(port: number, first = ""): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    let received = "";
    let onClose: (at: number) => void = () => undefined;
    const closed = new Promise<number>((done) => (onClose = done));
    const socket = connect(port, "127.0.0.1", () => {
      if (first !== "") socket.write(first);
      resolve({ socket, received: () => received, closed });
    });
    socket.on("data", (chunk: Buffer) => (received += chunk.toString()));
    socket.on("close", () => onClose(performance.now()));
    socket.once("error", reject);
    socket.on("error", () => undefined);
  });
}

import type { Writable } from "node:stream";
import type { ResponseFlow } from "../core/index";

/**
 * The flow of a stream's responses to its client, read off the writable they are written to: blocked while it
 * holds more than its high-water mark (the socket behind it does not take them), unblocked at its 'drain', or for
 * good once it closes. One 'drain' listener serves every request written to it (a gRPC stream carries many).
 */
export function writableFlow(writable: Writable): ResponseFlow {
  let waiting: (() => void)[] = [];
  const release = (): void => {
    const listeners = waiting;
    waiting = [];
    for (const listener of listeners) listener();
  };
  writable.on("drain", release);
  writable.once("close", release);
  const blocked = (): boolean => writable.writableNeedDrain && !writable.destroyed;
  return {
    get blocked() {
      return blocked();
    },
    whenUnblocked(listener) {
      if (blocked()) waiting.push(listener);
      else listener();
    },
  };
}

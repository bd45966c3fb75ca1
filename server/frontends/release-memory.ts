import { MessageChannel } from "node:worker_threads";
import { requestBuffers } from "./request-buffers";

/** Node's pool of small buffers is 8 KiB: an ArrayBuffer this large is one allocation of its own. */
const OWN_ALLOCATION_BYTES = 1024 * 1024;

/**
 * Gives the memory of a large buffer a refused request drops back to the system within milliseconds, rather than at
 * a garbage collection that may come seconds later: the budget lets other requests take its bytes at once, and a
 * burst of refused 64 MiB bodies and messages took the process to twice the budget. The ArrayBuffer is moved into a
 * message that is never read; closing the port that would receive it drops the message, and the memory with it.
 * Every view of it is left empty, so it must be the request's own (its body, message or decoded tensors), no longer
 * used. Memory the request pool lent (shared, so it cannot be moved) goes back to the pool; other buffers under 1 MiB
 * are left to the collector.
 */
export function releaseMemoryNow(buffer: ArrayBufferLike): void {
  if (buffer instanceof SharedArrayBuffer) {
    requestBuffers.give(new Uint8Array(buffer, 0, 0));
    return;
  }
  if (!(buffer instanceof ArrayBuffer) || buffer.byteLength < OWN_ALLOCATION_BYTES) return;
  const { port1, port2 } = new MessageChannel();
  try {
    port1.postMessage(null, [buffer]);
  } catch {
    // One Node marked untransferable: the collector frees it.
  }
  port2.close();
}

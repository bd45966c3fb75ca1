import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import type { CoreObserver } from "../core/index";

/** The V8 collector as a function: `--expose-gc` set at run time reaches new contexts, so one is asked for it. */
function exposedGc(): () => void {
  v8.setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

/** Buffers waiting for collection below this are left to V8's own schedule. */
export const IDLE_COLLECTION_MIN_BYTES = 32 * 2 ** 20;

/**
 * One full garbage collection when traffic stops after a burst. Request bodies and tensors live outside the JS
 * heap, and V8 collects them only as memory grows; once traffic stops nothing grows, so after a resnet50 overload
 * ~130 MB of requests already answered stayed resident until the next burst. When no request completed during
 * the last interval, some did before, and at least {@link IDLE_COLLECTION_MIN_BYTES} of ArrayBuffers exist, this
 * collects once (a few ms on a server's ~20 MB heap).
 */
export class IdleCollection {
  readonly observer: CoreObserver;
  readonly #timer: NodeJS.Timeout;
  #completedInInterval = 0;
  #completedSinceCollection = 0;

  constructor(intervalMs: number, collect: () => void = exposedGc(), arrayBufferBytes: () => number = () => process.memoryUsage().arrayBuffers) {
    this.observer = {
      requestCompleted: () => void this.#completedInInterval++,
      executionCompleted: () => undefined,
    };
    this.#timer = setInterval(() => {
      if (this.#completedInInterval === 0 && this.#completedSinceCollection > 0 && arrayBufferBytes() >= IDLE_COLLECTION_MIN_BYTES) {
        collect();
        this.#completedSinceCollection = 0;
      }
      this.#completedSinceCollection += this.#completedInInterval;
      this.#completedInInterval = 0;
    }, intervalMs);
    this.#timer.unref();
  }

  close(): void {
    clearInterval(this.#timer);
  }
}

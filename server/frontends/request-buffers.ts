/** Bodies and messages below this are left to V8: they cost little to allocate and little to collect. */
const MIN_POOLED_BYTES = 64 * 1024;
/** Nor above this: few requests are that large, and a large one kept idle costs more memory than it saves time. */
const MAX_POOLED_BYTES = 4 * 1024 * 1024;
/** Capacities are whole multiples of this, so that requests of one client (whose headers vary by a few bytes) share them. */
const CAPACITY_STEP = 64 * 1024;

/**
 * Memory for request bodies and gRPC messages, used again once their request is answered. At GPU rates a server
 * receives thousands of ~600 KB requests a second; each one's fresh buffer is external memory to V8, which collects
 * after every few dozen of them (with a mark-compact, once buffers of requests still in flight are promoted): on a
 * stand-in model with resnet50's I/O, garbage collection was a third of the main thread's time per request, and
 * reusing bodies took the mark-compacts from 51 to 8 in 4 s. Buffers come back only from a request that succeeded
 * and whose response went out ({@link give}): by then the core has copied its inputs for the backend (every backend
 * gathers them into a batch of its own) and nothing reads them, where a failed or abandoned request may still be
 * queued or batched, so its buffer is left to the garbage collector.
 *
 * The memory is shared (SharedArrayBuffer): a backend's thread reads a request's tensors where they lie, and an
 * ONNX Runtime instance's thread gathers its batch from them itself instead of the main thread (onnxruntime-backend.ts).
 */
export class RequestBufferPool {
  readonly #free = new Map<number, SharedArrayBuffer[]>();
  #freeBytes = 0;
  /** The buffers handed out and not yet given back: only those may come back, and only once. */
  readonly #lent = new WeakSet<SharedArrayBuffer>();

  /** `maxFreeBytes`: what is kept between requests at most (after a burst, until requests take it again). */
  constructor(readonly maxFreeBytes = 32 * 1024 * 1024) {}

  /**
   * Memory for `byteLength` bytes, holding whatever an earlier request left there (fresh memory is zeroed): the
   * caller fills all of it before anything reads it.
   */
  take(byteLength: number): Buffer {
    if (byteLength < MIN_POOLED_BYTES || byteLength > MAX_POOLED_BYTES) return Buffer.allocUnsafe(byteLength);
    const capacity = Math.ceil(byteLength / CAPACITY_STEP) * CAPACITY_STEP;
    let buffer = this.#free.get(capacity)?.pop();
    if (buffer !== undefined) this.#freeBytes -= capacity;
    else buffer = new SharedArrayBuffer(capacity);
    this.#lent.add(buffer);
    return Buffer.from(buffer, 0, byteLength);
  }

  /**
   * Takes back the memory of a body or message from {@link take} (anything else is ignored, as is one given back
   * twice). Call only when no view of it will be read again, on this thread or another. True when the memory was
   * one of this pool's and is kept for the next request; otherwise it is the caller's still (to free).
   */
  give(view: ArrayBufferView | undefined): boolean {
    const buffer = view?.buffer;
    if (!(buffer instanceof SharedArrayBuffer) || !this.#lent.has(buffer)) return false;
    if (this.#freeBytes + buffer.byteLength > this.maxFreeBytes) return false;
    this.#lent.delete(buffer);
    const free = this.#free.get(buffer.byteLength);
    if (free === undefined) this.#free.set(buffer.byteLength, [buffer]);
    else free.push(buffer);
    this.#freeBytes += buffer.byteLength;
    return true;
  }

  /** Whether `view` is on memory this pool lent and has not taken back: the request's own, to share or keep. */
  lends(view: ArrayBufferView): boolean {
    return view.buffer instanceof SharedArrayBuffer && this.#lent.has(view.buffer);
  }

  get freeBytes(): number {
    return this.#freeBytes;
  }
}

/** The process's pool, shared by both frontends (and by every server a process runs: it is only a free list). */
export const requestBuffers = new RequestBufferPool();

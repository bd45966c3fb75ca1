/**
 * Batch buffers kept to gather the next batch into: a worker-thread instance's, which its thread hands back after
 * each run, and a session thread's own, for the batches it gathers from shared request memory. Copying a batch into
 * fresh memory costs about nine times a copy into memory used before (the fresh pages fault in one by one: ~77 us
 * against ~9 us per 600 KB image), and each fresh buffer is external memory that drives the thread's garbage
 * collections; at GPU rates that copy was a third of the main thread's time per request.
 */
export class SpareBuffers {
  readonly #spares: ArrayBuffer[] = [];

  /**
   * `maxSpares` buffers of at most `maxBytes` each are kept (the rest are left to the garbage collector), so what an
   * instance keeps between bursts is bounded by them and by its largest batch.
   */
  constructor(private readonly maxSpares = 2, private readonly maxBytes = 32 * 1024 * 1024) {}

  /** `byteLength` bytes at the start of the smallest spare that holds them, or of a fresh buffer. */
  take(byteLength: number): Uint8Array<ArrayBuffer> {
    let best = -1;
    for (let i = 0; i < this.#spares.length; i++) {
      const size = this.#spares[i]!.byteLength;
      if (size >= byteLength && (best < 0 || size < this.#spares[best]!.byteLength)) best = i;
    }
    const buffer = best < 0 ? new ArrayBuffer(byteLength) : this.#spares.splice(best, 1)[0]!;
    return new Uint8Array(buffer, 0, byteLength);
  }

  /** Keeps `buffers` for later batches; past the limits, the smallest go. */
  give(buffers: readonly ArrayBuffer[]): void {
    for (const buffer of buffers) {
      if (buffer.byteLength === 0 || buffer.byteLength > this.maxBytes || this.#spares.includes(buffer)) continue;
      this.#spares.push(buffer);
    }
    this.#spares.sort((a, b) => b.byteLength - a.byteLength);
    this.#spares.length = Math.min(this.#spares.length, this.maxSpares);
  }
}

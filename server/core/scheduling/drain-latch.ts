/**
 * A scheduler's unloading: once closed it takes no new requests, and {@link DrainLatch.drained} settles when the
 * scheduler reports that every accepted request is answered (Triton's unload lets in-flight requests complete).
 */
export class DrainLatch {
  #closed = false;
  #settle: (() => void) | undefined;

  get closed(): boolean {
    return this.#closed;
  }

  /** Takes no new requests from now on. */
  close(): void {
    this.#closed = true;
  }

  /** Closes, and settles at the first {@link DrainLatch.settleIfIdle} that finds nothing left. */
  drained(): Promise<void> {
    this.#closed = true;
    return new Promise<void>((resolve) => (this.#settle = resolve));
  }

  /** Call whenever work ends: true (and the drain settled) when closed with nothing running or waiting. */
  settleIfIdle(idle: boolean): boolean {
    if (!this.#closed || !idle) return false;
    this.#settle?.();
    this.#settle = undefined;
    return true;
  }
}

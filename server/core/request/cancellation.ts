import type { CancellationSignal } from "./inference-request";

/**
 * A one-shot cancellation a frontend raises when its client goes away. It does what the core needs of an
 * AbortController at a fraction of the cost: on `simple` over HTTP, replacing the AbortController each request
 * made took server CPU per request from ~193 us to ~172 us (three alternating 6 s runs each, concurrency 8).
 */
export class Cancellation implements CancellationSignal {
  aborted = false;
  #listeners: (() => void)[] = [];

  addEventListener(_type: "abort", listener: () => void): void {
    this.#listeners.push(listener);
  }

  removeEventListener(_type: "abort", listener: () => void): void {
    const index = this.#listeners.indexOf(listener);
    if (index >= 0) this.#listeners.splice(index, 1);
  }

  /** Marks the request cancelled and tells every listener, once. */
  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    const listeners = this.#listeners;
    this.#listeners = [];
    for (const listener of listeners) listener();
  }
}

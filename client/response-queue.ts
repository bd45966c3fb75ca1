/**
 * Responses pushed by a transport's callbacks, read with `for await`: they wait here until read. The iteration
 * ends after {@link end}, throws after {@link fail}, and a reader that stops early (break, return, throw) calls
 * `onStop`, so the transport can cancel what still streams.
 */
export class ResponseQueue<T> implements AsyncIterable<T> {
  readonly #items: T[] = [];
  #done = false;
  #error: unknown;
  #wake: (() => void) | undefined;
  readonly #onStop: () => void;

  constructor(onStop: () => void) {
    this.#onStop = onStop;
  }

  push(item: T): void {
    if (this.#done) return;
    this.#items.push(item);
    this.#notify();
  }

  end(): void {
    this.#done = true;
    this.#notify();
  }

  fail(error: unknown): void {
    if (this.#done) return;
    this.#error = error;
    this.#done = true;
    this.#notify();
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let finished = false;
    try {
      for (;;) {
        if (this.#items.length > 0) {
          yield this.#items.shift()!;
          continue;
        }
        if (this.#done) {
          finished = true;
          if (this.#error !== undefined) throw this.#error;
          return;
        }
        await new Promise<void>((resolve) => (this.#wake = resolve));
      }
    } finally {
      if (!finished) {
        this.#done = true;
        this.#onStop();
      }
    }
  }
}

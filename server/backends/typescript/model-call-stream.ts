import type { ModelCallError } from "./model-call-error";
import type { InferResult } from "./typescript-model";

type Item = { readonly value: InferResult } | { readonly error: ModelCallError };

/**
 * What `context.inferStream` returns: the callee's responses in the order they came, buffered until the model reads
 * them. The first error response rejects the read that reaches it and ends the stream (the callee, if still
 * sending, is cancelled); leaving the loop early (`break`, `return`, a throw: the iterator's `return`) cancels the
 * callee's request. Single-consumer: it is its own iterator.
 */
export class ModelCallStream implements AsyncIterableIterator<InferResult> {
  readonly #cancel: () => void;
  readonly #items: Item[] = [];
  #final = false;
  #waiting: { readonly resolve: (result: IteratorResult<InferResult>) => void; readonly reject: (error: Error) => void } | undefined;

  /** `cancel` tells the server that the model no longer reads the call to `model` (it is then never pushed to again). */
  constructor(readonly model: string, cancel: () => void) {
    this.#cancel = cancel;
  }

  /** One answer of the callee; `final` ends the stream after it. An error ends it too, cancelling the rest. */
  push(item: InferResult | ModelCallError | undefined, final: boolean): void {
    if (this.#final) return;
    const isError = item instanceof Error;
    this.#final = final || isError;
    if (isError && !final) this.#cancel();
    if (item !== undefined) this.#items.push(isError ? { error: item } : { value: item });
    this.#wake();
  }

  next(): Promise<IteratorResult<InferResult>> {
    return new Promise((resolve, reject) => {
      if (this.#waiting !== undefined) {
        reject(new TypeError("context.inferStream(): next() was called while an earlier next() is pending"));
        return;
      }
      this.#waiting = { resolve, reject };
      this.#wake();
    });
  }

  return(): Promise<IteratorResult<InferResult>> {
    if (!this.#final) {
      this.#final = true;
      this.#cancel();
    }
    this.#items.length = 0;
    this.#wake();
    return Promise.resolve({ done: true, value: undefined });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** Settles the pending read, if there is one and something to settle it with. */
  #wake(): void {
    const waiting = this.#waiting;
    if (waiting === undefined) return;
    const item = this.#items.shift();
    if (item === undefined && !this.#final) return;
    this.#waiting = undefined;
    if (item === undefined) waiting.resolve({ done: true, value: undefined });
    else if ("error" in item) waiting.reject(item.error);
    else waiting.resolve({ done: false, value: item.value });
  }
}

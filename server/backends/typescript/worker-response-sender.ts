import type { ExecuteResponse, ResponseSender } from "./typescript-model";
import type { StreamResponseMessage, WireResponse, WireStream } from "./typescript-worker-protocol";

/** Posts a message to the main thread, moving the listed buffers. */
export type PostMessage = (message: StreamResponseMessage, transfer: ArrayBuffer[]) => void;

/** A model's response as it crosses back (its tensors copied into buffers listed in `transfer`). */
export type ToWireResponse = (response: ExecuteResponse | undefined, transfer: ArrayBuffer[]) => WireResponse;

/**
 * The worker's side of one decoupled request: what a model's `request.responseSender` is. Each send posts its
 * response at once, with its tensors' buffers transferred rather than copied again; cancellation is read from
 * memory the main thread shares, so a model that never yields to the event loop still sees it.
 */
export class WorkerResponseSender implements ResponseSender {
  readonly #stream: number;
  readonly #cancelled: Int32Array;
  readonly #post: PostMessage;
  readonly #toWire: ToWireResponse;
  #closed = false;

  constructor(stream: WireStream, post: PostMessage, toWire: ToWireResponse) {
    this.#stream = stream.id;
    this.#cancelled = new Int32Array(stream.cancelled);
    this.#post = post;
    this.#toWire = toWire;
  }

  send(response?: ExecuteResponse, options?: { readonly final?: boolean }): void {
    if (this.#closed) throw new Error("Unable to send response. Response sender has been closed.");
    if (this.isCancelled()) throw new Error("Unable to send response. The request was cancelled.");
    const final = options?.final === true;
    if (response === undefined && !final) throw new Error("send() needs a response, or { final: true } to end the stream without one");
    const transfer: ArrayBuffer[] = [];
    const wire = response === undefined ? undefined : this.#toWire(response, transfer);
    if (final) this.#closed = true;
    this.#post({ type: "stream-response", stream: this.#stream, response: wire, final }, transfer);
  }

  isCancelled(): boolean {
    return Atomics.load(this.#cancelled, 0) === 1;
  }

  /** The execution failed: the main thread ends the stream with the error, and later sends are refused. */
  close(): void {
    this.#closed = true;
  }
}

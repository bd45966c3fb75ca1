import type { ExecuteResponse, ResponseSender } from "./typescript-model";
import { SEND_WINDOW, STREAM_AHEAD, STREAM_CANCELLED, type StreamResponseMessage, type WireResponse, type WireStream } from "./typescript-worker-protocol";

/** Posts a message to the main thread, moving the listed buffers. */
export type PostMessage = (message: StreamResponseMessage, transfer: ArrayBuffer[]) => void;

/** A model's response as it crosses back (its tensors copied into buffers listed in `transfer`). */
export type ToWireResponse = (response: ExecuteResponse | undefined, transfer: ArrayBuffer[]) => WireResponse;

const SENT = Promise.resolve();

/**
 * The worker's side of one decoupled request: what a model's `request.responseSender` is. Each send posts its
 * response at once, with its tensors' buffers transferred rather than copied again, and returns a promise that
 * waits while the client is {@link SEND_WINDOW} responses behind. Cancellation and the client's progress are read
 * from memory the main thread shares, so a model that never yields to the event loop still sees its cancellation.
 */
export class WorkerResponseSender implements ResponseSender {
  readonly #stream: number;
  readonly #state: Int32Array;
  readonly #post: PostMessage;
  readonly #toWire: ToWireResponse;
  #closed = false;

  constructor(stream: WireStream, post: PostMessage, toWire: ToWireResponse) {
    this.#stream = stream.id;
    this.#state = new Int32Array(stream.state);
    this.#post = post;
    this.#toWire = toWire;
  }

  send(response?: ExecuteResponse, options?: { readonly final?: boolean }): Promise<void> {
    if (this.#closed) throw new Error("Unable to send response. Response sender has been closed.");
    if (this.isCancelled()) throw new Error("Unable to send response. The request was cancelled.");
    const final = options?.final === true;
    if (response === undefined && !final) throw new Error("send() needs a response, or { final: true } to end the stream without one");
    const transfer: ArrayBuffer[] = [];
    const wire = response === undefined ? undefined : this.#toWire(response, transfer);
    if (final) this.#closed = true;
    Atomics.add(this.#state, STREAM_AHEAD, 1);
    this.#post({ type: "stream-response", stream: this.#stream, response: wire, final }, transfer);
    return final ? SENT : this.#clientCaughtUp();
  }

  isCancelled(): boolean {
    return Atomics.load(this.#state, STREAM_CANCELLED) === 1;
  }

  /** Settles once the client is fewer than SEND_WINDOW responses behind, or the request is over. */
  #clientCaughtUp(): Promise<void> {
    const ahead = Atomics.load(this.#state, STREAM_AHEAD);
    if (ahead < SEND_WINDOW || this.isCancelled()) return SENT;
    const wait = Atomics.waitAsync(this.#state, STREAM_AHEAD, ahead);
    return wait.async ? wait.value.then(() => this.#clientCaughtUp()) : this.#clientCaughtUp();
  }

  /** The execution failed: the main thread ends the stream with the error, and later sends are refused. */
  close(): void {
    this.#closed = true;
  }
}

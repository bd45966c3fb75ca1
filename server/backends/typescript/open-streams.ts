import type { ErrorCode } from "../../../protocol/error-codes";
import type { BackendResponder, BackendResponse } from "../backend";
import type { StreamResponseMessage, WireResponse, WireStream } from "./typescript-worker-protocol";

function toBackendResponse(response: WireResponse): BackendResponse {
  if ("error" in response) return response;
  return { outputs: new Map(response.outputs.map(({ name, ...tensor }) => [name, tensor])) };
}

interface OpenStream {
  readonly responder: BackendResponder;
  readonly cancelled: Int32Array;
}

/**
 * The main thread's side of one instance's decoupled requests: the streams still open (no final flag yet), their
 * responses from the worker passed on, and the client's cancellation passed in through shared memory. A stream
 * leaves on its final flag, its cancellation, or when the instance fails it (execute threw, the worker died, the
 * instance closed), so none outlives its request.
 */
export class OpenStreams {
  readonly #open = new Map<number, OpenStream>();
  #nextId = 0;

  /** Opens a stream for `responder`: what the worker needs to answer it. */
  open(responder: BackendResponder): WireStream {
    const id = this.#nextId++;
    const cancelled = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT);
    const stream: OpenStream = { responder, cancelled: new Int32Array(cancelled) };
    this.#open.set(id, stream);
    responder.onCancel(() => {
      Atomics.store(stream.cancelled, 0, 1);
      this.#open.delete(id);
    });
    return { id, cancelled };
  }

  /** A response the worker sent; one for a stream that is no longer open (cancelled meanwhile) is dropped. */
  received(message: StreamResponseMessage): void {
    const stream = this.#open.get(message.stream);
    if (stream === undefined) return;
    if (message.final) this.#open.delete(message.stream);
    stream.responder.send(message.response === undefined ? undefined : toBackendResponse(message.response), message.final);
  }

  /** Ends the streams among `ids` still open (all of them without `ids`) with `error` as their final response. */
  fail(error: { readonly code: ErrorCode; readonly message: string }, ids?: readonly number[]): void {
    for (const id of ids ?? [...this.#open.keys()]) {
      const stream = this.#open.get(id);
      if (stream === undefined) continue;
      this.#open.delete(id);
      stream.responder.send({ error }, true);
    }
  }
}

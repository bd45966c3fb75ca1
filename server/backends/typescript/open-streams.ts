import type { ErrorCode } from "../../../protocol/error-codes";
import type { BackendResponder, BackendResponse } from "../backend";
import { STREAM_AHEAD, STREAM_CANCELLED, STREAM_STATE_SLOTS, type StreamResponseMessage, type WireResponse, type WireStream } from "./typescript-worker-protocol";

/** A response as the worker posted it, as the backend seam carries it. */
export function toBackendResponse(response: WireResponse): BackendResponse {
  if ("error" in response) return response;
  return { outputs: new Map(response.outputs.map(({ name, ...tensor }) => [name, tensor])) };
}

interface OpenStream {
  readonly responder: BackendResponder;
  readonly state: Int32Array;
  /** Responses passed on that the client has not taken yet: acknowledged to the worker once it has. */
  owed: number;
}

/**
 * The main thread's side of one instance's decoupled requests: the streams still open (no final flag yet), their
 * responses from the worker passed on and acknowledged once their client took them (the worker's sends wait for
 * that: flow control), and the client's cancellation passed in through shared memory. A stream leaves on its final
 * flag, its cancellation, or when the instance fails it (execute threw, the worker died, the instance closed or
 * unloads past its timeout), so none outlives its request.
 */
export class OpenStreams {
  readonly #open = new Map<number, OpenStream>();
  #nextId = 0;

  /** Opens a stream for `responder`: what the worker needs to answer it. */
  open(responder: BackendResponder): WireStream {
    const id = this.#nextId++;
    const state = new SharedArrayBuffer(STREAM_STATE_SLOTS * Int32Array.BYTES_PER_ELEMENT);
    const stream: OpenStream = { responder, state: new Int32Array(state), owed: 0 };
    this.#open.set(id, stream);
    responder.onCancel(() => {
      cancel(stream);
      this.#open.delete(id);
    });
    return { id, state };
  }

  /** A response the worker sent; one for a stream that is no longer open (cancelled meanwhile) is dropped. */
  received(message: StreamResponseMessage): void {
    const stream = this.#open.get(message.stream);
    if (stream === undefined) return;
    if (message.final) this.#open.delete(message.stream);
    stream.responder.send(message.response === undefined ? undefined : toBackendResponse(message.response), message.final);
    if (!message.final) acknowledgeWhenTaken(stream);
  }

  /** Ends the streams among `ids` still open (all of them without `ids`) with `error` as their final response. */
  fail(error: { readonly code: ErrorCode; readonly message: string }, ids?: readonly number[]): void {
    for (const id of ids ?? [...this.#open.keys()]) {
      const stream = this.#open.get(id);
      if (stream === undefined) continue;
      this.#open.delete(id);
      cancel(stream);
      stream.responder.send({ error }, true);
    }
  }
}

/** Tells the worker the stream is over: its model's next send throws, and a send waiting for the client returns. */
function cancel(stream: OpenStream): void {
  Atomics.store(stream.state, STREAM_CANCELLED, 1);
  Atomics.notify(stream.state, STREAM_AHEAD);
}

/** One more response to acknowledge once the client took it; one wait covers all of them. */
function acknowledgeWhenTaken(stream: OpenStream): void {
  if (++stream.owed > 1) return;
  stream.responder.onReady(() => {
    Atomics.sub(stream.state, STREAM_AHEAD, stream.owed);
    stream.owed = 0;
    Atomics.notify(stream.state, STREAM_AHEAD);
  });
}

import { asInferenceError, InferenceError } from "../errors";
import type { ResponseSink } from "../scheduling/request-scheduler";
import { Cancellation } from "./cancellation";
import type { CancellationSignal, InferResponse, OutputTensor } from "./inference-request";

/**
 * One response of a streamed request, as a frontend gets it: a response, an error response, or neither (the final
 * flag alone, which Triton's gRPC frontend turns into the empty final response on request). After the event whose
 * `final` is true there are no more.
 */
export interface StreamResponse {
  readonly response: InferResponse | InferenceError | undefined;
  readonly final: boolean;
}

export type StreamListener = (event: StreamResponse) => void;

/**
 * Hands `event` to a frontend's listener; returns what the listener threw instead of letting it reach the model's
 * thread of control (a worker's message handler, a timer), where it would end the process.
 */
export function deliverEvent(listener: StreamListener, event: StreamResponse): InferenceError | undefined {
  try {
    listener(event);
    return undefined;
  } catch (error) {
    return asInferenceError(error);
  }
}

/** How a stream turns a response's outputs into the client's response; throws an InferenceError when it cannot. */
export type ResponseOf = (outputs: OutputTensor[]) => InferResponse;

const CANCELLED = "request was cancelled by the client";

/**
 * The responses of one request to a decoupled model on their way to its frontend (Triton's response factory and
 * the request's lifetime in one): passes responses on until the final one, refuses whatever comes after it, and
 * turns the client's cancellation into a cancellation of this request only. `signal` may outlive the request (a
 * gRPC stream's, shared by all its requests): the stream stops listening to it once it ends, so nothing piles up.
 */
export class ResponseStream implements ResponseSink {
  readonly #listener: StreamListener;
  readonly #responseOf: ResponseOf;
  readonly #outer: CancellationSignal | undefined;
  readonly #cancellation = new Cancellation();
  readonly #onEnd: (error: InferenceError | undefined) => void;
  readonly #onOuterAbort = (): void => this.#cancel();
  #ended = false;

  constructor(listener: StreamListener, responseOf: ResponseOf, signal: CancellationSignal | undefined, onEnd: (error: InferenceError | undefined) => void) {
    this.#listener = listener;
    this.#responseOf = responseOf;
    this.#outer = signal;
    this.#onEnd = onEnd;
    signal?.addEventListener("abort", this.#onOuterAbort);
    if (signal?.aborted === true) this.#cancel();
  }

  /** This request's own cancellation: what the scheduler watches while it waits, and the model after. */
  get signal(): CancellationSignal {
    return this.#cancellation;
  }

  get ended(): boolean {
    return this.#ended;
  }

  get cancelled(): boolean {
    return this.#ended || this.#cancellation.aborted;
  }

  onCancel(listener: () => void): void {
    if (this.#cancellation.aborted) listener();
    else if (!this.#ended) this.#cancellation.addEventListener("abort", listener);
  }

  send(response: OutputTensor[] | InferenceError | undefined, final: boolean): void {
    if (this.#ended) return;
    let converted: InferResponse | InferenceError | undefined;
    try {
      converted = Array.isArray(response) ? this.#responseOf(response) : response;
    } catch (error) {
      converted = error instanceof InferenceError ? error : new InferenceError("INTERNAL", String(error));
    }
    if (final) this.#end(converted instanceof InferenceError ? converted : undefined);
    const thrown = deliverEvent(this.#listener, { response: converted, final });
    if (thrown !== undefined && !final) this.#undeliverable(thrown);
  }

  /** Ends the stream with `error` as its final response, unless it already ended. */
  fail(error: InferenceError): void {
    this.send(error, true);
  }

  #cancel(): void {
    if (this.#ended) return;
    this.#cancellation.abort();
    this.fail(new InferenceError("CANCELLED", CANCELLED));
  }

  /**
   * The frontend could not take a response (it threw): the request cannot go on, so the model sees it cancelled
   * and the frontend gets one final error, which ends it there too.
   */
  #undeliverable(thrown: InferenceError): void {
    if (this.#ended) return;
    this.#cancellation.abort();
    const failure = new InferenceError("INTERNAL", `a response could not be delivered: ${thrown.message}`);
    this.#end(failure);
    deliverEvent(this.#listener, { response: failure, final: true });
  }

  #end(error: InferenceError | undefined): void {
    this.#ended = true;
    this.#outer?.removeEventListener("abort", this.#onOuterAbort);
    this.#onEnd(error);
  }
}

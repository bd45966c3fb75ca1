import { asInferenceError, InferenceError } from "../errors";
import type { ResponseSink } from "../scheduling/request-scheduler";
import { Cancellation } from "./cancellation";
import type { CancellationSignal, InferResponse, OutputTensor } from "./inference-request";
import type { ResponseFlow } from "./response-flow";
import type { ResponseOutcome, ResponseTiming } from "./response-timing";

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

/** What a {@link ResponseStream} is told at construction. */
export interface ResponseStreamOptions {
  /** Turns a response's outputs into the client's response; throws an InferenceError when it cannot. */
  readonly responseOf: ResponseOf;
  /** The client's cancellation (it may outlive the request: a gRPC stream's, shared by all its requests). */
  readonly signal: CancellationSignal | undefined;
  /**
   * Whether the stream follows the client's cancellation itself: it cancels the request (told to the model through
   * {@link ResponseStream.signal}) and ends at once with CANCELLED, as for a decoupled model whose later responses
   * nobody waits for. Otherwise the scheduler watches the client's signal itself: a queued request is dropped, and
   * one that runs completes and ends the stream with its response (a native execution cannot be cut short, as in
   * Triton).
   */
  readonly endsOnCancel: boolean;
  /** Called once, when the final response is about to be handed over: undefined for success, else its error. */
  readonly onEnd: (error: InferenceError | undefined) => void;
  /** The client's flow control; absent, the client takes every response as it comes. */
  readonly flow?: ResponseFlow | undefined;
  /** Most responses written while the client is blocked; one more fails the stream (`--max-stream-backlog`). */
  readonly backlog: number;
  /** Times each response the model sends (a decoupled model's, for response_stats); absent, none is timed. */
  readonly timing?: ResponseTiming | undefined;
}

/**
 * The responses of one request on their way to its frontend (Triton's response factory and the request's lifetime
 * in one), for every kind of model: passes responses on until the final one, refuses whatever comes after it, and
 * turns the client's cancellation into a cancellation of this request only. The stream stops listening to the
 * client's signal once it ends, so nothing piles up on a signal shared by many requests.
 */
export class ResponseStream implements ResponseSink {
  readonly #listener: StreamListener;
  readonly #options: ResponseStreamOptions;
  #cancellation: Cancellation | undefined;
  readonly #onOuterAbort = (): void => this.#cancel();
  #ended = false;
  /** Responses written since the client last took everything. */
  #behind = 0;

  constructor(listener: StreamListener, options: ResponseStreamOptions) {
    this.#listener = listener;
    this.#options = options;
    if (!options.endsOnCancel) return;
    options.signal?.addEventListener("abort", this.#onOuterAbort);
    if (options.signal?.aborted === true) this.#cancel();
  }

  /** This request's own cancellation: what the scheduler watches while it waits, and the model after. */
  get signal(): CancellationSignal {
    return this.#own();
  }

  /** Made on first use: only a decoupled model's request (or a cancelled one) needs it. */
  #own(): Cancellation {
    return (this.#cancellation ??= new Cancellation());
  }

  get ended(): boolean {
    return this.#ended;
  }

  get cancelled(): boolean {
    return this.#ended || this.#cancellation?.aborted === true;
  }

  onCancel(listener: () => void): void {
    const cancellation = this.#own();
    if (cancellation.aborted) listener();
    else if (!this.#ended) cancellation.addEventListener("abort", listener);
  }

  get ready(): boolean {
    return this.#ended || this.#options.flow?.blocked !== true;
  }

  onReady(listener: () => void): void {
    if (this.ready) listener();
    else this.#options.flow!.whenUnblocked(listener);
  }

  send(response: OutputTensor[] | InferenceError | undefined, final: boolean): void {
    if (this.#ended) return;
    if (this.#overrun()) return;
    const timing = this.#options.timing;
    const outputStartNs = timing !== undefined && Array.isArray(response) ? process.hrtime.bigint() : undefined;
    let converted: InferResponse | InferenceError | undefined;
    try {
      converted = Array.isArray(response) ? this.#options.responseOf(response) : response;
    } catch (error) {
      converted = asInferenceError(error);
    }
    this.#deliver(converted, final);
    timing?.delivered(outcomeOf(converted), outputStartNs);
  }

  /** Ends the stream with a response made elsewhere (the response cache's). */
  answer(response: InferResponse): void {
    if (!this.#ended) this.#deliver(response, true);
  }

  /** Ends the stream with `error` as its final response, unless it already ended. */
  fail(error: InferenceError): void {
    this.send(error, true);
  }

  /** Ends the stream with `error` as its final response and tells the model its request is cancelled. */
  cancel(error: InferenceError): void {
    if (this.#ended) return;
    this.#own().abort();
    this.#deliver(error, true);
  }

  #deliver(response: InferResponse | InferenceError | undefined, final: boolean): void {
    if (final) this.#end(response instanceof InferenceError ? response : undefined);
    const thrown = deliverEvent(this.#listener, { response, final });
    if (thrown !== undefined && !final) this.#undeliverable(thrown);
  }

  /**
   * Counts a response written while the client is blocked, and fails the stream when there are more than the
   * backlog allows: a model that does not wait for {@link ready} must not grow the server's memory without bound
   * for a client that reads nothing.
   */
  #overrun(): boolean {
    const flow = this.#options.flow;
    if (flow?.blocked !== true) return false;
    if (++this.#behind === 1) flow.whenUnblocked(() => (this.#behind = 0));
    if (this.#behind <= this.#options.backlog) return false;
    this.cancel(new InferenceError("UNAVAILABLE", `the client is not reading its responses: more than ${this.#options.backlog} wait to be written (--max-stream-backlog)`));
    return true;
  }

  #cancel(): void {
    if (this.#ended) return;
    this.cancel(new InferenceError("CANCELLED", CANCELLED));
    this.#options.timing?.delivered("cancel");
  }

  /**
   * The frontend could not take a response (it threw): the request cannot go on, so the model sees it cancelled
   * and the frontend gets one final error, which ends it there too.
   */
  #undeliverable(thrown: InferenceError): void {
    if (this.#ended) return;
    this.#own().abort();
    const failure = new InferenceError("INTERNAL", `a response could not be delivered: ${thrown.message}`);
    this.#end(failure);
    deliverEvent(this.#listener, { response: failure, final: true });
  }

  #end(error: InferenceError | undefined): void {
    this.#ended = true;
    if (this.#options.endsOnCancel) this.#options.signal?.removeEventListener("abort", this.#onOuterAbort);
    this.#options.onEnd(error);
  }
}

function outcomeOf(response: InferResponse | InferenceError | undefined): ResponseOutcome {
  if (response === undefined) return "empty";
  if (!(response instanceof InferenceError)) return "success";
  return response.code === "CANCELLED" ? "cancel" : "fail";
}

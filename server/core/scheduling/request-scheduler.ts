/**
 * What a model version's scheduler is to the rest of the core (Triton's `Scheduler` interface in scheduler.h):
 * the dynamic batcher and the ensemble's step runner both implement it, and the repository holds a version's
 * scheduler through it only, never through a concrete class.
 */
import type { CallLink, CancellationSignal, InferenceTrace, OutputTensor, ParameterValue } from "../request/inference-request";
import type { RequestTimes } from "../request/request-times";
import type { ValidatedRequest } from "../request/request-validation";
import type { InferenceError } from "../errors";

export interface ScheduleOptions {
  /** Triton's `priority` request parameter: 0 = default, 1 = highest. */
  readonly priority?: number;
  /** Triton's `timeout` request parameter, µs. */
  readonly timeoutUs?: number;
  readonly signal?: CancellationSignal;
  /** The request's parameters, for a scheduler that forwards the request (an ensemble's steps). */
  readonly parameters?: Readonly<Record<string, ParameterValue>>;
  /** The request's id, for a scheduler that forwards the request: Triton's step requests carry it (and their errors quote it). */
  readonly id?: string;
  /** A sampled request's trace: its queued inputs, and the requests its model makes in turn (an ensemble's steps, model calls). */
  readonly trace?: InferenceTrace;
  /** Where the scheduler writes when the request entered its queue and when its execution started and ended. */
  readonly times: RequestTimes;
  /**
   * Where the request's responses go: a decoupled model's as the model sends them, any other model's one response
   * (or error), final. A request refused or dropped by the scheduler gets its error here too.
   */
  readonly sink: ResponseSink;
  /** The executions waiting on the request (a model call's), for the calls its model makes in turn. */
  readonly chain?: readonly CallLink[];
}

/** Where the responses of one request go (the core's stream for that request). */
export interface ResponseSink {
  /** One response's outputs (the requested ones, checked against the config), its error, or none: the final flag alone. */
  send(response: OutputTensor[] | InferenceError | undefined, final: boolean): void;
  /** Whether the request is over (cancelled, or its final response sent): what is sent now is dropped. */
  readonly cancelled: boolean;
  /** Calls `listener` once when the request is cancelled by its client. */
  onCancel(listener: () => void): void;
  /** Whether the client has taken the responses sent so far (false while they wait in its connection's buffer). */
  readonly ready: boolean;
  /** Calls `listener` once when the client is {@link ready} again or the request is over (at once if either holds). */
  onReady(listener: () => void): void;
}

/** Where a model version's validated requests go: its dynamic batcher, its sequence batcher, or an ensemble's step runner. */
export interface RequestScheduler {
  /** Takes the request; everything it has to say, its refusal included, reaches `options.sink`. Never throws. */
  enqueue(request: ValidatedRequest, options: ScheduleOptions): void;
  /** Requests accepted and not yet answered by an execution. */
  readonly pendingCount: number;
  /** Requests waiting in this scheduler's own queue. */
  readonly queueDepth: number;
  /** Refuses new requests; resolves once every accepted one is answered. */
  close(): Promise<void>;
  /** Fails every request still waiting with UNAVAILABLE (`message`) and refuses new ones; running executions finish. */
  refuseQueued(message: string): void;
}

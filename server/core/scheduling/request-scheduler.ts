/**
 * What a model version's scheduler is to the rest of the core (Triton's `Scheduler` interface in scheduler.h):
 * the dynamic batcher and the ensemble's step runner both implement it, and the repository holds a version's
 * scheduler through it only, never through a concrete class.
 */
import type { CallLink, CancellationSignal, InferenceTrace, OutputTensor, ParameterValue } from "../request/inference-request";
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
  /** A sampled request's trace: the scheduler records QUEUE_START and the COMPUTE_* timestamps. */
  readonly trace?: InferenceTrace;
  /**
   * A decoupled model's request: its responses go here as the model sends them, and the scheduled result (no
   * outputs) only says that the execution returned and the instance is free again.
   */
  readonly sink?: ResponseSink;
  /** The executions waiting on the request (a model call's), for the calls its model makes in turn. */
  readonly chain?: readonly CallLink[];
}

/** Where the responses of one request to a decoupled model go (the core's stream for that request). */
export interface ResponseSink {
  /** One response's outputs (the requested ones, checked against the config), its error, or none: the final flag alone. */
  send(response: OutputTensor[] | InferenceError | undefined, final: boolean): void;
  /** Whether the request is over (cancelled, or its final response sent): what is sent now is dropped. */
  readonly cancelled: boolean;
  /** Calls `listener` once when the request is cancelled by its client. */
  onCancel(listener: () => void): void;
}

export interface ScheduledResult {
  readonly outputs: OutputTensor[];
  readonly queueNs: number;
}

/** Where a model version's validated requests go: its dynamic batcher, or an ensemble's step runner. */
export interface RequestScheduler {
  enqueue(request: ValidatedRequest, options: ScheduleOptions): Promise<ScheduledResult>;
  /** Requests accepted and not yet answered by an execution. */
  readonly pendingCount: number;
  /** Requests waiting in this scheduler's own queue. */
  readonly queueDepth: number;
  /** Refuses new requests; resolves once every accepted one is answered. */
  close(): Promise<void>;
  /** Fails every request still waiting with UNAVAILABLE (`message`) and refuses new ones; running executions finish. */
  refuseQueued(message: string): void;
}

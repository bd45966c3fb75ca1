import type { DataType } from "../../../protocol/datatypes";
import type { ResponseFlow } from "./response-flow";
import type { Tensor } from "./tensor";

/** A request parameter value, as both protocols can carry it. */
export type ParameterValue = string | number | boolean | bigint;

export interface RequestedOutput {
  readonly name: string;
  /** Triton's classification extension: return the top `classification` classes instead of the tensor. */
  readonly classification?: number;
}

/**
 * What the core needs of an AbortSignal to drop a queued request whose client went away. An AbortSignal is one;
 * a frontend may pass something lighter (creating an AbortController costs microseconds on every request).
 */
export interface CancellationSignal {
  readonly aborted: boolean;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

/** Triton's timestamp names (TRITONSERVER_InferenceTraceActivity and the frontends' own). */
export type TraceActivity =
  | "HTTP_RECV_START" | "HTTP_RECV_END" | "HTTP_SEND_START" | "HTTP_SEND_END"
  | "GRPC_WAITREAD_START" | "GRPC_WAITREAD_END" | "GRPC_SEND_START" | "GRPC_SEND_END"
  | "REQUEST_START" | "QUEUE_START" | "COMPUTE_START" | "COMPUTE_INPUT_END" | "COMPUTE_OUTPUT_START" | "COMPUTE_END" | "REQUEST_END";

/**
 * Triton's tensor activities (TRITONSERVER_InferenceTraceActivity) as its core reports them: a request's inputs
 * when it enters a dynamic batcher's or an ensemble's queue, a response's outputs when it is sent. Triton's core
 * never reports TENSOR_BACKEND_INPUT (core python/test/test_binding.py: "TENSOR_BACKEND_INPUT never get called").
 */
export type TensorActivity = "TENSOR_QUEUE_INPUT" | "TENSOR_BACKEND_OUTPUT";

/**
 * The trace of a sampled request (Triton's trace extension). The frontend that sampled it records its receive and
 * send timestamps; the core records the model and its own: REQUEST_START/END, then, for a request that runs on an
 * instance, QUEUE_START and the COMPUTE_* timestamps; and the tensors as they pass. `ns` is process.hrtime.bigint().
 * The trace keeps what its level asks for.
 */
export interface InferenceTrace {
  model(name: string, version: number, requestId: string | undefined): void;
  timestamp(activity: TraceActivity, ns: bigint): void;
  /** Read at once: the core may hand the tensors' buffers on (to a backend's thread) right after. */
  tensors(activity: TensorActivity, tensors: Iterable<Tensor>): void;
  /** The trace of a request this one makes (an ensemble's step): its own id, this one's as `parent_id`. */
  child(): InferenceTrace;
}

/** A model version whose execution waits on a request: it made it, by a model call (BLS). */
export interface CallLink {
  readonly modelName: string;
  readonly modelVersion: number;
}

/**
 * A protocol-neutral inference request, built by a frontend. `signal` aborts when the client goes away: a
 * request still queued is then dropped without being executed.
 */
export interface InferRequest {
  readonly modelName: string;
  /** Empty or absent selects the model's version policy (the highest ready version). */
  readonly modelVersion?: string;
  readonly id?: string;
  readonly parameters?: Readonly<Record<string, ParameterValue>>;
  readonly inputs: readonly Tensor[];
  /** Absent means every output of the model. */
  readonly outputs?: readonly RequestedOutput[];
  readonly signal?: CancellationSignal;
  /** Whether the client keeps up with the responses: a streaming frontend's; absent, the client always does. */
  readonly flow?: ResponseFlow;
  /** Present only for a request the tracer sampled. */
  readonly trace?: InferenceTrace;
  /** For a model's call to another model: the executions waiting on it, outermost first. */
  readonly chain?: readonly CallLink[];
}

export interface OutputTensor extends Tensor {
  readonly datatype: DataType;
}

export interface InferResponse {
  readonly modelName: string;
  readonly modelVersion: string;
  readonly id?: string;
  readonly outputs: readonly OutputTensor[];
}

/**
 * The seam between the core and whatever computes: the core builds an {@link InstanceSpec} from the model
 * config, asks a {@link Backend} for instances, and never runs two executions on one instance at a time.
 * Backends never import the core; tensors cross as plain byte arrays in the core's layout (row-major,
 * little-endian; BYTES as 4-byte-length-prefixed elements).
 */
import type { ErrorCode } from "../../protocol/error-codes";

/** A protocol datatype name (`FP32`, `BYTES`, ...: protocol/datatypes.ts), a plain string where tensors cross threads. */
export type BackendDataType = string;

export interface TensorSpec {
  readonly name: string;
  readonly datatype: BackendDataType;
  /** Full shape as the backend sees it, batch dimension included; -1 marks a variable dimension. */
  readonly shape: readonly number[];
}

export interface BackendTensor {
  readonly datatype: BackendDataType;
  readonly shape: readonly number[];
  /** Owned by the receiver once passed: a backend may transfer or detach its buffer. */
  readonly data: Uint8Array;
}

export type TensorMap = Map<string, BackendTensor>;

export interface InstanceSpec {
  readonly modelName: string;
  readonly modelVersion: number;
  /**
   * The model file or directory (`<repo>/<model>/<version>/<default_model_filename>`), or the version folder
   * itself for a backend that declares no default filename and a config that names none.
   */
  readonly modelPath: string;
  /** `<repo>/<model>`: where the config and label files are. */
  readonly modelDirectory: string;
  /**
   * The model configuration as Triton's JSON (the `GET /v2/models/{m}/config` form) as loaded, with the instance
   * groups filled in; auto-complete has not run yet (it needs an instance to read the model file).
   */
  readonly modelConfig: Readonly<Record<string, unknown>>;
  readonly instanceName: string;
  readonly device: "cpu" | "gpu";
  readonly deviceId: number;
  /** Triton's `optimization.execution_accelerators` for the device: accelerator name -> parameters. */
  readonly accelerators: readonly { name: string; parameters: Readonly<Record<string, string>> }[];
  /** Triton's model `parameters` (string values), e.g. `intra_op_thread_count`. */
  readonly parameters: Readonly<Record<string, string>>;
  readonly intraOpThreads: number;
  /** Graph optimization level as in Triton's `optimization.graph.level` (0 = backend default). */
  readonly graphOptimizationLevel: number;
}

/** What a model file says about its own inputs and outputs (used by config auto-complete and validation). */
export interface ModelIo {
  readonly inputs: readonly TensorSpec[];
  readonly outputs: readonly TensorSpec[];
}

/** An input element a backend cannot hand its model unaltered: which one, and why (a phrase after "element i"). */
export interface InputProblem {
  readonly element: number;
  readonly reason: string;
}

export interface Backend {
  readonly name: string;
  /** Whether KIND_AUTO should try the GPU for this backend's instances (explicit KIND_GPU is always passed on). */
  readonly usesGpu: boolean;
  /**
   * Whether the backend runs code from the model directory (the TypeScript backend require()s its model file,
   * whatever its name) rather than reading its model file as data: the load API then refuses `file:` overrides for
   * its models unless the server allows model code uploads.
   */
  readonly runsModelCode: boolean;
  /**
   * The file a version folder holds when the config names none (`default_model_filename`). Absent: the backend
   * reads no file of its own, and its instances get the version folder as their model path.
   */
  readonly defaultModelFilename?: string;
  /**
   * Triton `platform` names this backend serves (`onnxruntime_onnx`): a config naming one of them loads on this
   * backend, and a config naming this backend gets the first of them as its platform. Absent: none.
   */
  readonly platforms?: readonly string[];
  /**
   * Whether a config that names neither platform nor backend loads on this backend when a version folder holds its
   * {@link defaultModelFilename}, as Triton recognises `model.onnx`. Absent: false.
   */
  readonly recognizedByModelFile?: boolean;
  /**
   * Whether the backend can answer a request with any number of responses (a decoupled model,
   * `model_transaction_policy { decoupled: true }`). Absent: false, and such a model is refused at load.
   */
  readonly servesDecoupled?: boolean;
  /** Whether a version whose model file is missing fails before any instance starts (`model file ... not found`). */
  readonly requiresModelFile?: boolean;
  /** Instances of a KIND_CPU group whose config gives no count. Absent: 1. */
  readonly defaultCpuInstanceCount?: number;
  /**
   * Loads one instance. Rejecting fails the model load (the model becomes UNAVAILABLE with the error's message
   * as the reason); it never throws synchronously.
   */
  createInstance(spec: InstanceSpec): Promise<BackendInstance>;
  /**
   * Why GPU instances with these accelerators can run on the first GPU only (a provider that takes no device id),
   * or undefined when an instance group's `gpus` may name any GPU. Optional: absent means any. Groups that list
   * no `gpus` then get their instances on GPU 0 instead of on every GPU, rather than failing on the others.
   */
  firstGpuOnly?(accelerators: InstanceSpec["accelerators"]): string | undefined;
  /**
   * The first element of a (well-formed) input this backend could not pass on exactly, or undefined. The core
   * asks for each request before it joins a batch and refuses it with INVALID_ARG rather than alter its data.
   * Optional: without it every well-formed tensor is carried exactly.
   */
  inputProblem?(tensor: BackendTensor): InputProblem | undefined;
}

export interface BackendInstance {
  /** The model's own I/O description, when the backend can read one. */
  readonly io: ModelIo | undefined;
  /** Where executions run: on the calling (main) thread, or on a thread of the instance's own. */
  readonly executionThread: "main" | "worker";
  /**
   * What computes the executions, for the load log, the model config and metrics: an execution provider
   * (`cpu`, `cuda`, `tensorrt`, `webgpu`) for ONNX Runtime, `cpu` for backends that run JavaScript.
   */
  readonly executionProvider: string;
  /**
   * Whether one {@link execute} call may carry several executions (handed over at once: one thread hop for all).
   * False: the core passes one execution per call.
   */
  readonly groupsExecutions: boolean;
  /**
   * Runs the executions one after the other, in order (Triton's TRITONBACKEND_ModelInstanceExecute); never called
   * again on the same instance before it settles. Each request is answered through its {@link BackendRequest.responder}:
   * a model that answers once sends it exactly one final response, a decoupled one any number. An execution that
   * fails as a whole answers its requests with the error (batch-io.ts's failExecution) and reports undefined
   * (it is not counted in the statistics). Resolves with one entry per execution; rejecting means the instance failed:
   * the core fails every request not answered yet with the rejection's message (safe to show to the client).
   */
  execute(executions: readonly BackendExecution[]): Promise<readonly (ExecutionTimes | undefined)[]>;
  /**
   * Present on instances that can die on their own (their worker thread crashed, exited or ran out of memory):
   * resolves with the reason once that happened. The execution it held has been rejected with that reason by
   * then; the instance never serves again and the core replaces it. Never rejects.
   */
  readonly lost?: Promise<Error>;
  /**
   * Optional: the model began to unload (unload, reload, shutdown). Requests already accepted still come; an
   * instance whose running JavaScript can be ended safely may now bound how long each execution takes (a native
   * ONNX Runtime run cannot be cut short without aborting the process, so its instances lack this).
   */
  draining?(): void;
  close(): Promise<void>;
}

export type BackendParameterValue = string | number | boolean | bigint;

/**
 * What a backend's model may ask of the server while it serves a request: run another model (Triton's Business Logic
 * Scripting). The core hands each request its own caller, bound to that request: a call is validated, queued (in
 * the callee's dynamic batcher), counted and traced as any request, as a child of it, and it is cancelled when that
 * request is; a call chain too deep or one that would wait on its own busy instance is refused.
 */
export interface ModelCaller {
  /** Never rejects: the callee's failure comes back as its error code and message. Refuses a decoupled callee. */
  infer(call: ModelCall): Promise<ModelCallResult>;
  /**
   * Runs the call and hands each of its responses to `listener` as they come, the last one marked final: a decoupled
   * callee's zero or more responses, any other callee's one. A failure is a final error result; `call.signal`
   * cancels the callee's request. Resolves once the final response was handed over; never rejects.
   */
  stream(call: ModelCall, listener: (event: ModelCallStreamEvent) => void): Promise<void>;
}

/** One response of a streamed model call; the result is absent on a final flag sent alone. */
export interface ModelCallStreamEvent {
  readonly result: ModelCallResult | undefined;
  readonly final: boolean;
}

/** What an {@link AbortSignal} is to a {@link ModelCall}: the caller no longer waits for it once it aborts. */
export interface ModelCallSignal {
  readonly aborted: boolean;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

export interface ModelCall {
  readonly modelName: string;
  /** Absent or empty: the model's version policy (the highest ready version). */
  readonly modelVersion?: string;
  /** Batch dimension included when the callee batches; owned by the callee once passed. */
  readonly inputs: TensorMap;
  /** Absent: every output of the callee. */
  readonly outputs?: readonly string[];
  readonly parameters?: Readonly<Record<string, BackendParameterValue>>;
  /** Aborts when the call's result is no longer wanted (the execution that made it ended). */
  readonly signal?: ModelCallSignal;
}

/** A call's outputs, each in a buffer the receiver owns (it may transfer it), or the callee's error. */
export type ModelCallResult =
  | { readonly modelName: string; readonly modelVersion: string; readonly outputs: TensorMap }
  | { readonly error: { readonly code: ErrorCode; readonly message: string } };

/** One execution: a batch of requests, which a backend may run together (batch-io.ts gathers and scatters) or one by one. */
export type BackendExecution = readonly BackendRequest[];

/** One request of an execution. */
export interface BackendRequest {
  /** Runs other models on this request's behalf; absent where the server offers none. */
  readonly caller?: ModelCaller;
  /**
   * This request's inputs in the backend's form (the config's `reshape` applied, in config order), batch dimension
   * included when the model batches. The core's buffers, views of the client's payload: a backend copies them
   * (batch-io.ts's gatherInputs) before it keeps or transfers them.
   */
  readonly inputs: TensorMap;
  /** The request's batch size (1 when the model does not batch): its share of a batch's first dimension. */
  readonly batchSize: number;
  /** The request's parameters as the client sent them (and, in an ensemble step, the ensemble request's). */
  readonly parameters: Readonly<Record<string, BackendParameterValue>>;
  /** The outputs the client asked for; a backend may produce more, the core keeps these. */
  readonly requestedOutputs: readonly string[];
  /**
   * Where its responses go: for a model that answers once exactly one, final; for a decoupled model's request
   * (`model_transaction_policy { decoupled: true }`) any number, during the execution or after it.
   */
  readonly responder: BackendResponder;
}

/**
 * One request's response stream (Triton's TRITONBACKEND_ResponseFactory): zero or more responses, then the final
 * flag, alone or with the last response. What comes after the final flag or once the request is cancelled is
 * dropped: the backend should stop producing when {@link cancelled} turns true.
 */
export interface BackendResponder {
  send(response: BackendResponse | undefined, final: boolean): void;
  /** Whether the client went away (or the request ended): no response will reach it any more. */
  readonly cancelled: boolean;
  /** Calls `listener` once when the request is cancelled (at once if it already is). */
  onCancel(listener: () => void): void;
  /**
   * Whether the client has taken the responses sent so far. While it has not, a backend should hold its next
   * response (flow control): the server fails a stream that writes too many to a client that reads none.
   */
  readonly ready: boolean;
  /** Calls `listener` once when the client is {@link ready} again or the request is over (at once if either holds). */
  onReady(listener: () => void): void;
}

/** One request's answer: its outputs, or the error that fails only this request. */
export type BackendResponse =
  | { readonly outputs: TensorMap }
  | { readonly error: { readonly code: ErrorCode; readonly message: string } };

/**
 * When one execution ran, on process.hrtime.bigint()'s clock (one for all threads), and the backend's split of it
 * (Triton's compute_input/infer/output). `startNs`: when the backend took the execution up (the first of a call:
 * when the call began); `computeInputNs` includes gathering the inputs.
 */
export interface ExecutionTimes {
  readonly startNs: bigint;
  readonly endNs: bigint;
  readonly computeInputNs: number;
  readonly computeInferNs: number;
  readonly computeOutputNs: number;
}

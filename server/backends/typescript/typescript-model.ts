/**
 * The contract of `backend: "typescript"` models, published as `gcp-inference-stack/typescript-backend`: Triton's
 * Python-backend contract (`TritonPythonModel` with initialize / execute / finalize), in TypeScript. A model
 * version folder holds `model.js` (CommonJS, compiled from `model.ts`) whose default export is a class
 * implementing {@link TypeScriptModel}. Each instance of the model's instance_group is one object of that class
 * in a worker thread of its own; the server never calls `execute` on one object twice at a time.
 *
 * Type-only: importing these types adds nothing to `model.js`. The runtime helpers (FP16/BF16 conversion,
 * {@link inputTensor}, `ModelCallError`) come from the same module.
 */

import type { DataType } from "../../../protocol/datatypes";
import type { ErrorCode } from "../../../protocol/error-codes";

/** Triton's protocol datatypes, and its error codes (a model picks one for a request it refuses). */
export type { DataType, ErrorCode };

interface TensorOf<D extends DataType, Data> {
  readonly datatype: D;
  /** Row-major; the batch dimension first when the model batches (max_batch_size > 0). */
  readonly shape: readonly number[];
  readonly data: Data;
}

/**
 * A tensor as a model receives it. Numbers come as the matching typed array; BOOL as 0/1 bytes; FP16 and BF16 as
 * their raw 16-bit patterns (convert with {@link fp16ToFloat32Array} / {@link bf16ToFloat32Array} and back);
 * BYTES as one Uint8Array per element (views into one buffer: copy what you keep past `execute`).
 */
export type Tensor =
  | TensorOf<"BOOL", Uint8Array>
  | TensorOf<"UINT8", Uint8Array>
  | TensorOf<"UINT16", Uint16Array>
  | TensorOf<"UINT32", Uint32Array>
  | TensorOf<"UINT64", BigUint64Array>
  | TensorOf<"INT8", Int8Array>
  | TensorOf<"INT16", Int16Array>
  | TensorOf<"INT32", Int32Array>
  | TensorOf<"INT64", BigInt64Array>
  | TensorOf<"FP16", Uint16Array>
  | TensorOf<"FP32", Float32Array>
  | TensorOf<"FP64", Float64Array>
  | TensorOf<"BYTES", readonly Uint8Array[]>
  | TensorOf<"BF16", Uint16Array>;

/** A tensor as a model returns it: as {@link Tensor}, and BYTES elements may also be strings (sent as UTF-8). */
export type OutputTensor = Tensor | TensorOf<"BYTES", readonly (Uint8Array | string)[]>;

/** The tensor of datatype `D`. */
export type TensorOfType<D extends DataType> = Extract<Tensor, { readonly datatype: D }>;

/** A request parameter as the client sent it (gRPC int64 parameters beyond 2^53 arrive as bigint). */
export type ParameterValue = string | number | boolean | bigint;

/** The model configuration in Triton's JSON form (what `GET /v2/models/{m}/config` returns); the usual fields typed. */
export interface ModelConfigJson {
  readonly name: string;
  readonly backend: string;
  readonly max_batch_size: number;
  readonly input: readonly { readonly name: string; readonly data_type: string; readonly dims: readonly number[] }[];
  readonly output: readonly { readonly name: string; readonly data_type: string; readonly dims: readonly number[]; readonly label_filename: string }[];
  /** The config's `parameters { key: ... value: { string_value: ... } }`. */
  readonly parameters: Readonly<Record<string, { readonly string_value: string }>>;
  readonly [field: string]: unknown;
}

/** What `initialize` learns about the instance it is (Triton's Python backend `args`). */
export interface InitializeArgs {
  readonly modelConfig: ModelConfigJson;
  readonly modelName: string;
  readonly modelVersion: number;
  /** `<repository>/<model>`: where config.pbtxt and label files are (Python's `model_repository`). */
  readonly modelDirectory: string;
  /** `<repository>/<model>/<version>`: where model.js is. */
  readonly versionDirectory: string;
  readonly instanceName: string;
  readonly instanceKind: "KIND_CPU" | "KIND_GPU";
  readonly deviceId: number;
}

/** One request of the batch `execute` receives. */
export interface ExecuteRequest {
  /** Every input the client sent, by name, already checked against the config (datatype, shape, size). */
  readonly inputs: Readonly<Record<string, Tensor>>;
  /** The request's parameters (in an ensemble step: the ensemble request's). */
  readonly parameters: Readonly<Record<string, ParameterValue>>;
  /** The outputs the client asked for; returning more is fine, the server keeps these. */
  readonly requestedOutputs: readonly string[];
  /**
   * Present only when the model is decoupled (`model_transaction_policy { decoupled: true }`): where this request's
   * responses go (Triton's Python `request.get_response_sender()`).
   */
  readonly responseSender?: ResponseSender;
}

/**
 * A decoupled model's responses to one request (Triton's Python `InferenceResponseSender`): any number of
 * responses, before or after `execute` returns, then the final flag, with the last response or alone
 * (`send(undefined, { final: true })`). Each response crosses to the server at once; its tensors are copied
 * when sent, so the model may reuse its arrays. The request is over, for the server and its client, at the
 * final flag: until then it counts as in flight, so a model must send the final flag on every path.
 */
export interface ResponseSender {
  /**
   * Sends one response (outputs, or an error that the client gets for this response while the stream goes on),
   * or none with `{ final: true }`. Throws once the final flag was sent or the request was cancelled, so a model
   * that ignores {@link isCancelled} still stops at its next send. The promise is flow control: it settles at once
   * while the client keeps up, and waits while it is 64 responses behind (it reads slowly, or not at all). A model
   * that produces many responses should `await` it; one that does not and gets more than `--max-stream-backlog`
   * responses ahead of a client that reads none has its request failed (UNAVAILABLE) and cancelled.
   */
  send(response?: ExecuteResponse, options?: { readonly final?: boolean }): Promise<void>;
  /** Whether the client cancelled the request (it disconnected, or its stream was cancelled): stop sending. */
  isCancelled(): boolean;
}

/** One request's answer: outputs by name, or an error that fails this request only (default code INTERNAL). */
export type ExecuteResponse =
  | { readonly outputs: Readonly<Record<string, OutputTensor>> }
  | { readonly error: { readonly message: string; readonly code?: ErrorCode } };

/** How {@link ExecuteContext.infer} and {@link ExecuteContext.inferStream} run their call. */
export interface InferOptions {
  /** The callee's version; absent: its version policy (the highest ready version). */
  readonly version?: number | string;
  /** The call's own parameters (`priority`, `timeout` among them); the request's are not passed on by themselves. */
  readonly parameters?: Readonly<Record<string, ParameterValue>>;
  /** The outputs wanted; absent: every output of the callee. */
  readonly outputs?: readonly string[];
  /**
   * The request of this `execute` the call is made for: the call is cancelled when that request is (its client went
   * away), traced as its child, and counted in its call chain (depth and cycle checks). Required when the batch holds
   * more than one request; with one request, that one.
   */
  readonly request?: ExecuteRequest;
}

/** What {@link ExecuteContext.infer} resolves with, and each response {@link ExecuteContext.inferStream} yields. */
export interface InferResult {
  readonly modelName: string;
  readonly modelVersion: string;
  /** The outputs by name, as a model receives inputs (see {@link Tensor}). */
  readonly outputs: Readonly<Record<string, Tensor>>;
}

/** What `execute` may do beyond computing: call other models (Triton's Business Logic Scripting). */
export interface ExecuteContext {
  /**
   * Runs `model` on `inputs` as the server runs any request (validation, the callee's dynamic batcher and queue
   * policy, its statistics) and resolves with its outputs. The inputs are copied as they are sent: the model keeps
   * its arrays. Rejects with a `ModelCallError` carrying the callee's error code (`INVALID_ARG`, `NOT_FOUND`,
   * `UNAVAILABLE` for a call refused as too deep or as one that would wait on its own busy instance, `CANCELLED`
   * once the request it serves is gone, `UNSUPPORTED` for a decoupled callee: stream it with {@link inferStream}); rejects with a TypeError for a call that cannot be sent (an `options.request` not
   * of this batch, a malformed tensor, a call after `execute` returned).
   */
  infer(model: string, inputs: Readonly<Record<string, OutputTensor>>, options?: InferOptions): Promise<InferResult>;
  /**
   * Runs `model` as {@link infer} does and yields its responses as they come (Triton's Python
   * `exec(decoupled=True)`): a decoupled callee's zero or more responses, ending after its final one; any other
   * callee's one response. An error response rejects the read that reaches it with a `ModelCallError` and ends the
   * stream, cancelling the rest; so does the callee's failure (its worker died: `INTERNAL`) and the cancellation of
   * the request the call serves (`CANCELLED`). Leaving the loop early (`break`, `return`, a throw) cancels the
   * callee's request: its `responseSender.isCancelled()` turns true. The call belongs to the `execute()` that made
   * it: a stream still open when `execute` settles is cancelled, so a decoupled model forwarding a callee's
   * responses to its own `responseSender` awaits the loop. Throws a TypeError, at once, for a call that cannot
   * be sent (as {@link infer} rejects).
   */
  inferStream(model: string, inputs: Readonly<Record<string, OutputTensor>>, options?: InferOptions): AsyncIterableIterator<InferResult>;
}

/**
 * A TypeScript model. `initialize` runs once per instance before the model is ready; a throw there makes the
 * version UNAVAILABLE with the message. `execute` gets a batch of requests (as many as the dynamic batcher
 * formed) and a context to call other models with ({@link ExecuteContext}), and returns one response per request, in order; a throw fails every request of the batch with
 * INTERNAL and the message, and the instance keeps serving. `finalize` runs when the instance is unloaded.
 * If the worker thread dies (an uncaught exception, `process.exit`, out of memory), the requests of the batch
 * fail with INTERNAL and the server starts a new instance.
 */
export interface TypeScriptModel {
  initialize?(args: InitializeArgs): void | Promise<void>;
  /**
   * A decoupled model returns nothing: it answers through each request's {@link ExecuteRequest.responseSender}, and
   * the instance takes its next batch as soon as `execute` returns (or its promise settles), whatever it still sends.
   * A throw (or rejection) then ends every stream of the batch not yet final with an INTERNAL error response.
   */
  execute(requests: readonly ExecuteRequest[], context: ExecuteContext): readonly ExecuteResponse[] | void | Promise<readonly ExecuteResponse[] | void>;
  finalize?(): void | Promise<void>;
}

/** What `model.js` default-exports. */
export type TypeScriptModelClass = new () => TypeScriptModel;

import type { ErrorCode } from "../../../protocol/error-codes";
import type { BackendParameterValue } from "../backend";
import type { NamedTensor, StartupMessage } from "../instance-worker";
import type { InitializeArgs } from "./typescript-model";

/** What the main thread gives a TypeScript model's worker (plain data: it crosses threads). */
export interface TypeScriptWorkerData {
  readonly modelPath: string;
  readonly initializeArgs: InitializeArgs;
}

export interface WireRequest {
  readonly inputs: readonly NamedTensor[];
  readonly parameters: Readonly<Record<string, BackendParameterValue>>;
  readonly requestedOutputs: readonly string[];
  /** A decoupled model's request: its responses go out as `stream-response` messages with this id. */
  readonly stream?: WireStream;
}

export interface WireStream {
  readonly id: number;
  /**
   * Int32 slots both threads read and write ({@link STREAM_CANCELLED}, {@link STREAM_AHEAD}): shared memory, so a
   * model that never yields still sees its cancellation, and a waiting send wakes without a message.
   */
  readonly state: SharedArrayBuffer;
}

/** Slot set to 1 by the main thread when the request ends without the model (its client cancelled, it failed). */
export const STREAM_CANCELLED = 0;
/** Slot counting the responses the worker posted that the client has not taken yet (the main thread acknowledges). */
export const STREAM_AHEAD = 1;
export const STREAM_STATE_SLOTS = 2;
/**
 * Responses a model may send ahead of its client before its `send()` waits (flow control). A write buffer reports
 * its client caught up only once it is empty ('drain'): with 16, a model waited through every drain and streaming
 * ran 15-20% below its rate without flow control; 64 keeps it producing meanwhile (49-50k against 39-43k
 * responses/s, `npm run bench -- --quick --models streaming`, alternating, 2026-11-28).
 */
export const SEND_WINDOW = 64;

export type WireResponse =
  | { readonly outputs: readonly NamedTensor[] }
  | { readonly error: { readonly code: ErrorCode; readonly message: string } };

/**
 * Main thread -> worker: executions to run one after the other (each its own execute() call), answered together
 * with the call's id; or the request to finalize and exit.
 */
export type TypeScriptWorkerRequest =
  | { readonly type: "execute"; readonly id: number; readonly executions: readonly (readonly WireRequest[])[] }
  | { readonly type: "finalize" };

export type TypeScriptStartupMessage = StartupMessage<null>;

/** How one execute() call ended: a decoupled model's responses went out as stream responses, none here. */
export type ExecutionEnd =
  | {
      readonly type: "responses"; readonly responses: readonly WireResponse[];
      readonly computeInputNs: number; readonly computeInferNs: number; readonly computeOutputNs: number;
    }
  | { readonly type: "execute-error"; readonly message: string };

/** One execute() call's end, with when it began and ended (process.hrtime.bigint(), one clock for all threads). */
export type ExecutionReply = ExecutionEnd & { readonly startNs: bigint; readonly endNs: bigint };

export interface TypeScriptWorkerReply {
  readonly type: "executed";
  readonly id: number;
  readonly results: readonly ExecutionReply[];
}

/** Worker -> main thread, for a decoupled model: one response of the stream `stream`, and whether it is the last. */
export interface StreamResponseMessage {
  readonly type: "stream-response";
  readonly stream: number;
  readonly response: WireResponse | undefined;
  readonly final: boolean;
}

import type { ErrorCode } from "../../../protocol/error-codes";
import type { BackendParameterValue } from "../backend";
import type { NamedTensor } from "../instance-worker";

/** Worker -> main thread, during an execution: the model calls another model for request `request` of the batch. */
export interface ModelCallMessage {
  readonly type: "model-call";
  readonly callId: number;
  /** `context.inferStream`: every response of the callee is answered, the last with `final`; else one answer. */
  readonly stream: boolean;
  /** Index of the request in the batch being executed. */
  readonly request: number;
  readonly modelName: string;
  readonly modelVersion: string | undefined;
  readonly inputs: readonly NamedTensor[];
  readonly outputs: readonly string[] | undefined;
  readonly parameters: Readonly<Record<string, BackendParameterValue>> | undefined;
}

/**
 * Worker -> main thread: the model left a streamed call's loop early, or the execution that made a call ended
 * within a group of executions; the callee's request is cancelled.
 */
export interface ModelCallCancel {
  readonly type: "model-call-cancel";
  readonly callId: number;
}

export type ModelCallAnswerResult =
  | { readonly modelName: string; readonly modelVersion: string; readonly outputs: readonly NamedTensor[] }
  | { readonly error: { readonly code: ErrorCode; readonly message: string } };

/**
 * Main thread -> worker: one answer to the call `callId` (its output buffers transferred). A call made with
 * `context.infer` gets one, final; a streamed one gets one per response of the callee, the last final (with no
 * result when the callee sent its final flag alone).
 */
export interface ModelCallAnswer {
  readonly type: "model-call-answer";
  readonly callId: number;
  readonly result: ModelCallAnswerResult | undefined;
  readonly final: boolean;
}

export function isModelCallMessage(message: unknown): message is ModelCallMessage | ModelCallCancel {
  const type = typeof message === "object" && message !== null ? (message as { type?: unknown }).type : undefined;
  return type === "model-call" || type === "model-call-cancel";
}

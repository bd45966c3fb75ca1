import type { ErrorCode } from "../../../protocol/error-codes";
import type { BackendParameterValue } from "../backend";
import type { NamedTensor } from "../instance-worker";

/** Worker -> main thread, during an execution: the model calls another model for request `request` of the batch. */
export interface ModelCallMessage {
  readonly type: "model-call";
  readonly callId: number;
  /** Index of the request in the batch being executed. */
  readonly request: number;
  readonly modelName: string;
  readonly modelVersion: string | undefined;
  readonly inputs: readonly NamedTensor[];
  readonly outputs: readonly string[] | undefined;
  readonly parameters: Readonly<Record<string, BackendParameterValue>> | undefined;
}

/** Main thread -> worker: the answer to the call `callId` (its output buffers transferred). */
export interface ModelCallAnswer {
  readonly type: "model-call-answer";
  readonly callId: number;
  readonly result:
    | { readonly modelName: string; readonly modelVersion: string; readonly outputs: readonly NamedTensor[] }
    | { readonly error: { readonly code: ErrorCode; readonly message: string } };
}

export function isModelCallMessage(message: unknown): message is ModelCallMessage {
  return typeof message === "object" && message !== null && (message as { type?: unknown }).type === "model-call";
}

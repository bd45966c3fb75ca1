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
}

export type WireResponse =
  | { readonly outputs: readonly NamedTensor[] }
  | { readonly error: { readonly code: ErrorCode; readonly message: string } };

/** Main thread -> worker: a batch to execute (answered with the call's id), or the request to finalize and exit. */
export type TypeScriptWorkerRequest =
  | { readonly type: "execute"; readonly id: number; readonly requests: readonly WireRequest[] }
  | { readonly type: "finalize" };

export type TypeScriptStartupMessage = StartupMessage<null>;

export type TypeScriptWorkerReply =
  | {
      readonly type: "responses"; readonly id: number; readonly responses: readonly WireResponse[];
      readonly computeInputNs: number; readonly computeInferNs: number; readonly computeOutputNs: number;
    }
  | { readonly type: "execute-error"; readonly id: number; readonly message: string };

/** Messages between the bench and its in-process ONNX Runtime baseline child (Node IPC). */
import type { InstanceSpec } from "../server/index";

/** argv of the child, as JSON: the session the server would create for the model. */
export interface OrtBaselineSettings {
  /** The instance the server would create; the child derives providers and session options from it as the backend does. */
  readonly instance: InstanceSpec;
  readonly inputName: string;
  /** FP16 models take half-precision input. */
  readonly inputDatatype: "FP32" | "FP16";
  /** One batch element's shape, e.g. [3, 224, 224]. */
  readonly elementShape: readonly number[];
}

export interface OrtBaselineRequest {
  readonly batchSize: number;
  readonly warmupMs: number;
  readonly durationMs: number;
}

export type OrtBaselineMessage =
  | { readonly type: "ready" }
  | { readonly type: "measured"; readonly runLatenciesNs: number[]; readonly durationNs: number; readonly batchSize: number }
  | { readonly type: "failed"; readonly message: string };

/** Messages between the bench and its in-process ONNX Runtime baseline child (Node IPC). */

/** argv of the child, as JSON: the session the server would create for the model. */
export interface OrtBaselineSettings {
  readonly modelPath: string;
  readonly inputName: string;
  /** One batch element's shape, e.g. [3, 224, 224]. */
  readonly elementShape: readonly number[];
  readonly intraOpThreads: number;
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

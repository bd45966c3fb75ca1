/** Messages between the bench and its in-process ONNX Runtime baseline child (Node IPC). */
import type { InstanceSpec } from "../server/index";
import type { ChildStatusMessage, MeasurementWindow } from "./child-messages";

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

export interface OrtBaselineRequest extends MeasurementWindow {
  readonly batchSize: number;
}

export type OrtBaselineMessage =
  | ChildStatusMessage
  | { readonly type: "measured"; readonly runLatenciesNs: number[]; readonly durationNs: number; readonly batchSize: number };

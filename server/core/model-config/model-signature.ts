import type { Backend } from "../../backends/backend";
import type { DataType } from "../../../protocol/datatypes";

/** One input or output as the model's (completed) config declares it. */
export interface TensorSignature {
  readonly name: string;
  readonly datatype: DataType;
  /** Config dims, without the batch dimension; -1 is variable. */
  readonly dims: readonly number[];
  /** The shape the backend sees instead of `dims` (config `reshape`), without the batch dimension. */
  readonly reshape: readonly number[] | undefined;
  readonly optional: boolean;
  /** Class labels from the output's `label_filename`, for the classification extension. */
  readonly labels: readonly string[] | undefined;
}

/** What requests are validated against: built once per loaded model version. */
export interface ModelSignature {
  /** The backend's check for inputs it cannot pass on exactly (Backend.inputProblem); undefined: none. */
  readonly inputProblem?: Backend["inputProblem"];
  readonly maxBatchSize: number;
  readonly inputs: readonly TensorSignature[];
  readonly outputs: readonly TensorSignature[];
  /** Inputs the server fills for sequence models (START, END, READY, CORRID, implicit state inputs); clients never send them. */
  readonly controls: readonly { readonly name: string; readonly datatype: DataType }[];
}

/** The shape clients see in model metadata: a leading -1 when the model batches. */
export function fullShape(signature: ModelSignature, tensor: TensorSignature): number[] {
  return signature.maxBatchSize > 0 ? [-1, ...tensor.dims] : [...tensor.dims];
}

import type { DataType } from "./datatypes";
import type { Tensor } from "./tensor";

/** A request parameter value, as both protocols can carry it. */
export type ParameterValue = string | number | boolean | bigint;

export interface RequestedOutput {
  readonly name: string;
  /** Triton's classification extension: return the top `classification` classes instead of the tensor. */
  readonly classification?: number;
}

/**
 * What the core needs of an AbortSignal to drop a queued request whose client went away. An AbortSignal is one;
 * a frontend may pass something lighter (creating an AbortController costs microseconds on every request).
 */
export interface CancellationSignal {
  readonly aborted: boolean;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

/**
 * A protocol-neutral inference request, built by a frontend. `signal` aborts when the client goes away: a
 * request still queued is then dropped without being executed.
 */
export interface InferRequest {
  readonly modelName: string;
  /** Empty or absent selects the model's version policy (the highest ready version). */
  readonly modelVersion?: string;
  readonly id?: string;
  readonly parameters?: Readonly<Record<string, ParameterValue>>;
  readonly inputs: readonly Tensor[];
  /** Absent means every output of the model. */
  readonly outputs?: readonly RequestedOutput[];
  readonly signal?: CancellationSignal;
}

export interface OutputTensor extends Tensor {
  readonly datatype: DataType;
}

export interface InferResponse {
  readonly modelName: string;
  readonly modelVersion: string;
  readonly id?: string;
  readonly outputs: readonly OutputTensor[];
}

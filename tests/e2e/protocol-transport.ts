import type { DataType, ErrorCode } from "../../server/core/index";

/** A tensor in a test case: `values` are plain JS values (64-bit ints as bigint, FP16/BF16 as raw uint16 bits). */
export interface CaseTensor {
  readonly name: string;
  readonly datatype: DataType;
  readonly shape: readonly number[];
  readonly values: readonly (number | bigint | boolean | string)[];
}

/** A deliberately malformed payload: the bytes are sent as given (binary encodings only). */
export interface RawCaseTensor {
  readonly name: string;
  readonly datatype: DataType;
  readonly shape: readonly number[];
  readonly raw: Uint8Array;
}

export interface CaseRequest {
  readonly model: string;
  readonly version?: string;
  readonly inputs: readonly (CaseTensor | RawCaseTensor)[];
  readonly outputs?: readonly { name: string; classification?: number }[];
  readonly parameters?: Readonly<Record<string, number | string | boolean>>;
  /** The request's `id`, which Triton's errors quote. */
  readonly id?: string;
}

export type CaseResult =
  | { readonly kind: "ok"; readonly outputs: readonly CaseTensor[] }
  | { readonly kind: "error"; readonly code: ErrorCode; readonly message: string };

/**
 * One way of sending a case to the server (HTTP JSON, HTTP binary, gRPC typed contents, gRPC raw contents...).
 * `binary` says whether tensors travel as raw bytes, which decides the cases it can run (FP16/BF16 and raw
 * payloads need it, as in Triton).
 */
export interface ProtocolTransport {
  readonly name: string;
  readonly binary: boolean;
  infer(request: CaseRequest): Promise<CaseResult>;
}

export function isRawTensor(tensor: CaseTensor | RawCaseTensor): tensor is RawCaseTensor {
  return "raw" in tensor;
}

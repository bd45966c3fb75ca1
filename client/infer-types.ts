/** What an inference call takes and returns on the client, independent of the transport (HTTP or gRPC). */
import type { DataType } from "../protocol/datatypes";
import type { PlainTensorValues, TensorData, TensorDataByType } from "./tensor-data";

/**
 * How a tensor travels over HTTP: `binary` is Triton's binary tensor data extension (raw little-endian bytes
 * after the JSON header), `json` is the plain KServe v2 `data` array. gRPC always sends raw bytes.
 */
export type TensorFormat = "binary" | "json";

/** A request or tensor parameter value (KServe v2 `parameters`). */
export type ParameterValue = string | number | boolean;

/** Per-call options every client method takes. */
export interface CallOptions {
  /** Aborts the call; the promise rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /** Rejects with `RequestTimeoutError` when the server has not answered in time; overrides the client default. */
  readonly timeoutMs?: number;
  /** Extra request headers (HTTP) or metadata (gRPC). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** One input of an inference request. */
export interface InferInput {
  readonly name: string;
  /** Full shape, batch dimension included when the model batches. */
  readonly shape: readonly number[];
  /** Required for plain number arrays and for BOOL/FP16/BF16 typed arrays; otherwise inferred from `data`. */
  readonly datatype?: DataType;
  readonly data: TensorData | PlainTensorValues;
  readonly parameters?: Readonly<Record<string, ParameterValue>>;
}

/** An output to return, with how to return it. */
export interface RequestedOutput {
  readonly name: string;
  /** Overrides the call's `outputFormat` for this output. */
  readonly format?: TensorFormat;
  /** Classification extension: return the top `classification` entries as BYTES "value:index[:label]". */
  readonly classification?: number;
}

export interface InferOptions extends CallOptions {
  /** Model version; the server's version policy picks one when absent. */
  readonly modelVersion?: string;
  /** Request id, echoed in the response. */
  readonly id?: string;
  /** Outputs to return; every output when absent. */
  readonly outputs?: readonly (string | RequestedOutput)[];
  /** Defaults to the client's `inputFormat` (binary unless configured). FP16/BF16 inputs are always binary. */
  readonly inputFormat?: TensorFormat;
  /** Defaults to the client's `outputFormat` (binary unless configured). */
  readonly outputFormat?: TensorFormat;
  /** Request parameters: sequence_id, priority, timeout (µs) and custom keys. */
  readonly parameters?: Readonly<Record<string, ParameterValue>>;
}

/** An input after validation: datatype known, data in its typed form. What transports encode. */
export interface InputTensor {
  readonly name: string;
  readonly datatype: DataType;
  readonly shape: readonly number[];
  readonly data: TensorData;
  readonly format: TensorFormat;
  readonly parameters: Readonly<Record<string, ParameterValue>>;
}

/** A requested output after defaults were applied. */
export interface OutputSelection {
  readonly name: string;
  readonly format: TensorFormat;
  readonly classification: number | undefined;
}

/** A validated, transport-neutral inference request. */
export interface InferRequest {
  readonly modelName: string;
  readonly modelVersion: string | undefined;
  readonly id: string | undefined;
  readonly parameters: Readonly<Record<string, ParameterValue>>;
  readonly inputs: readonly InputTensor[];
  /** Undefined: every output, in `outputFormat`. */
  readonly outputs: readonly OutputSelection[] | undefined;
  readonly outputFormat: TensorFormat;
}

/** An output tensor; narrow on `datatype` to get the matching typed array in `data`. */
export type OutputTensor = {
  readonly [T in DataType]: {
    readonly name: string;
    readonly datatype: T;
    readonly shape: readonly number[];
    readonly data: TensorDataByType[T];
    readonly parameters?: Readonly<Record<string, ParameterValue>>;
  };
}[DataType];

/**
 * Where the client's time went for one inference, in perf_analyzer's terms: `sendNs` encoding the request
 * (a prepared request charges its one-time encoding to its first send and 0 to later ones), `responseWaitNs`
 * from handing it to the connection until the response headers arrived, `receiveNs` reading and decoding the
 * response body.
 */
export interface InferTiming {
  readonly sendNs: number;
  readonly responseWaitNs: number;
  readonly receiveNs: number;
}

/** A request encoded once by a transport and sendable many times (load generators, retries). */
export interface PreparedInferRequest {
  readonly modelName: string;
  readonly modelVersion: string | undefined;
  /** Time it took to encode. */
  readonly encodeNs: number;
}

/**
 * The `inference` messages the gRPC frontend reads and writes, typed as @grpc/proto-loader hands them over with
 * {@link GRPC_LOADER_OPTIONS}: proto field names, 64-bit integers as decimal strings (exact, unlike doubles),
 * `bytes` as Buffers that point into the received message, unset message fields as `null`, and each oneof's
 * chosen member named by a virtual field. Written messages may use numbers for 64-bit fields and leave fields
 * out; protobufjs' `fromObject` fills defaults.
 */

/** Options for @grpc/proto-loader; the shapes below hold only with exactly these. */
export const GRPC_LOADER_OPTIONS = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
} as const;

/** A 64-bit integer as decoded: decimal text. */
export type Int64Text = string;

export type InferParameterChoice = "bool_param" | "int64_param" | "string_param" | "double_param" | "uint64_param";

export interface InferParameterMessage {
  readonly parameter_choice?: InferParameterChoice;
  readonly bool_param?: boolean;
  readonly int64_param?: Int64Text;
  readonly string_param?: string;
  readonly double_param?: number;
  readonly uint64_param?: Int64Text;
}

export type InferParameterMap = Readonly<Record<string, InferParameterMessage>>;

export interface InferTensorContentsMessage {
  readonly bool_contents: readonly boolean[];
  readonly int_contents: readonly number[];
  readonly int64_contents: readonly Int64Text[];
  readonly uint_contents: readonly number[];
  readonly uint64_contents: readonly Int64Text[];
  readonly fp32_contents: readonly number[];
  readonly fp64_contents: readonly number[];
  readonly bytes_contents: readonly Buffer[];
}

export interface InferInputTensorMessage {
  readonly name: string;
  readonly datatype: string;
  readonly shape: readonly Int64Text[];
  readonly parameters: InferParameterMap;
  readonly contents: InferTensorContentsMessage | null;
}

export interface InferRequestedOutputTensorMessage {
  readonly name: string;
  readonly parameters: InferParameterMap;
}

export interface ModelInferRequestMessage {
  readonly model_name: string;
  readonly model_version: string;
  readonly id: string;
  readonly parameters: InferParameterMap;
  readonly inputs: readonly InferInputTensorMessage[];
  readonly outputs: readonly InferRequestedOutputTensorMessage[];
  readonly raw_input_contents: readonly Buffer[];
}

export interface InferOutputTensorMessage {
  readonly name: string;
  readonly datatype: string;
  readonly shape: readonly number[];
  readonly parameters?: Readonly<Record<string, Partial<InferParameterMessage>>>;
}

export interface ModelInferResponseMessage {
  readonly model_name: string;
  readonly model_version: string;
  readonly id: string;
  readonly parameters?: Readonly<Record<string, Partial<InferParameterMessage>>>;
  readonly outputs: readonly InferOutputTensorMessage[];
  readonly raw_output_contents: readonly Uint8Array[];
}

export interface ModelStreamInferResponseMessage {
  readonly error_message: string;
  readonly infer_response: Partial<ModelInferResponseMessage>;
}

/** Requests of the metadata-style RPCs that name a model and an optional version. */
export interface ModelVersionRequestMessage {
  readonly name: string;
  readonly version: string;
}

export interface RepositoryIndexRequestMessage {
  readonly repository_name: string;
  readonly ready: boolean;
}

export interface ModelRepositoryParameterMessage {
  readonly parameter_choice?: "bool_param" | "int64_param" | "string_param" | "bytes_param";
  readonly bool_param?: boolean;
  readonly int64_param?: Int64Text;
  readonly string_param?: string;
  readonly bytes_param?: Buffer;
}

export interface RepositoryModelRequestMessage {
  readonly repository_name: string;
  readonly model_name: string;
  readonly parameters: Readonly<Record<string, ModelRepositoryParameterMessage>>;
}

export interface HealthCheckResponseMessage {
  readonly status: "UNKNOWN" | "SERVING" | "NOT_SERVING" | "SERVICE_UNKNOWN";
}

export interface TraceSettingRequestMessage {
  readonly settings: Readonly<Record<string, { readonly value: readonly string[] }>>;
  readonly model_name: string;
}

/** LogSettingsRequest/Response's SettingValue. */
export interface LogSettingValueMessage {
  readonly parameter_choice?: "bool_param" | "uint32_param" | "string_param";
  readonly bool_param?: boolean;
  readonly uint32_param?: number;
  readonly string_param?: string;
}

export interface LogSettingsMessage {
  readonly settings: Readonly<Record<string, LogSettingValueMessage>>;
}

export interface SystemSharedMemoryRegisterRequestMessage {
  readonly name: string;
  readonly key: string;
  readonly offset: Int64Text;
  readonly byte_size: Int64Text;
}

/** Status, and Unregister: an empty name means every region. */
export interface SystemSharedMemoryRegionRequestMessage {
  readonly name: string;
}

export { InferenceClient, type InferenceClientOptions, type ModelCallOptions } from "./inference-client";
export type { ClientTls } from "./client-tls";
export type { ClientTransport } from "./client-transport";
export { GrpcTransport, type GrpcTransportOptions } from "./grpc-transport";
export { HttpTransport, type HttpTransportOptions } from "./http-transport";
export { InferResult } from "./infer-result";
export type { GenerateResponse, GenerateStreamEvent, StreamedResponse } from "./stream-types";
export type { ModelLoadOverrides } from "./model-load-overrides";
export type {
  CallOptions, InferInput, InferOptions, InferRequest, InferTiming, InputTensor, OutputSelection, OutputTensor,
  ParameterValue, PreparedInferRequest, RequestedOutput, TensorFormat,
} from "./infer-types";
export {
  InferenceServerError, InternalServerError, InvalidArgumentError, NotFoundError, RequestTimeoutError, ServerUnreachableError,
  UnavailableError, UnsupportedError, type InferenceErrorCode,
} from "./inference-server-error";
export type {
  BatchStat, DurationStat, InferenceStats, LogSettings, ModelConfig, ModelConfigTensor, ModelMetadata, ModelStatistics,
  RepositoryIndexEntry, ServerMetadata, TensorMetadata,
} from "./kserve-types";
export { bytesToTensorData, elementCountOf, tensorDataToBytes, toTensorData } from "./tensor-data";
export type { NumericTensorData, PlainTensorValues, TensorData, TensorDataByType } from "./tensor-data";
export { DATATYPES, type DataType } from "../protocol/datatypes";
export { encodeHttpInfer } from "./http-infer-codec";
// FP16 and BF16 tensors are Uint16Arrays of bit patterns (Node 20 has no Float16Array): these convert numbers to
// the `data` of an FP16/BF16 input and an output's data back to numbers.
export { fromFloat16Array, toFloat16Array } from "../protocol/float16";
export { fromBfloat16Array, toBfloat16Array } from "../protocol/bfloat16";

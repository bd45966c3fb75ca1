export { InferenceCore, SERVER_EXTENSIONS, type CoreSettings, type ModelMetadata } from "./inference-core";
export { InferenceError, type ErrorCode } from "./errors";
export type { InferRequest, InferResponse, OutputTensor, ParameterValue, RequestedOutput } from "./inference-request";
export type { Tensor } from "./tensor";
export { elementCount, joinBytesElements, splitBytesElements } from "./tensor";
export { DATATYPES, ELEMENT_BYTE_SIZE, isDataType, type DataType } from "./datatypes";
export type { CoreObserver, ExecutionOutcome, FailureReason, ModelGauges, RequestOutcome } from "./core-observer";
export type { ModelIndexEntry, ModelState } from "./model-version";
export type { ModelStatisticsSnapshot } from "./model-statistics";

export { InferenceCore, type CoreSettings, type ModelInputs, type ModelMetadata } from "./inference-core";
export { asInferenceError, clipped, InferenceError, invalidArg } from "./errors";
export type { ErrorCode } from "../../protocol/error-codes";
export { Cancellation } from "./request/cancellation";
export type { StreamListener, StreamResponse } from "./request/response-stream";
export type { CancellationSignal, InferRequest, InferResponse, OutputTensor, ParameterValue, RequestedOutput } from "./request/inference-request";
export type { Tensor } from "./request/tensor";
export { copyInSlices } from "./scheduling/batch-tensors";
export { bytesElements, bytesElementTexts, elementCount, joinBytesElements, joinBytesStrings } from "./request/tensor";
export { DATATYPES, ELEMENT_BYTE_SIZE, isDataType, type DataType } from "../../protocol/datatypes";
export type { CoreObserver, ExecutionOutcome, FailureReason, ModelGauges, RequestOutcome } from "./core-observer";
export type { InstancePlacement, ModelIndexEntry, ModelState } from "./repository/model-version";
export type { ModelStatisticsSnapshot } from "./repository/model-statistics";
export { modelConfigSchema } from "./model-config/schema";
export { parseModelConfigText } from "./model-config/parse";
export { type LoadOverrides, refuseRepositoryName } from "./repository/load-overrides";
export { DEFAULT_REQUEST_LIMITS, type RequestLimits } from "./request/request-validation";
export { DEFAULT_MAX_CALL_DEPTH } from "./scheduling/model-calls";
export type { InferenceTrace } from "./request/inference-request";
export {
  answerTraceSetting, DEFAULT_TRACE_SETTING, INT32_MAX, type RequestTrace, type TraceLevel, Tracer, type TraceSettingRequest, type TraceSettingValues, UINT32_MAX,
} from "../tracing/index";

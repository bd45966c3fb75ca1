export { InferenceCore, type CoreSettings, type ModelMetadata } from "./inference-core";
export { InferenceError, type ErrorCode, invalidArg } from "./errors";
export { Cancellation } from "./cancellation";
export type { CancellationSignal, InferRequest, InferResponse, OutputTensor, ParameterValue, RequestedOutput } from "./inference-request";
export type { Tensor } from "./tensor";
export { bytesElementTexts, elementCount, joinBytesElements, joinBytesStrings } from "./tensor";
export { DATATYPES, ELEMENT_BYTE_SIZE, isDataType, type DataType } from "./datatypes";
export type { CoreObserver, ExecutionOutcome, FailureReason, ModelGauges, RequestOutcome } from "./core-observer";
export type { InstancePlacement, ModelIndexEntry, ModelState } from "./model-version";
export type { ModelStatisticsSnapshot } from "./model-statistics";
export { modelConfigSchema } from "./model-config-schema";
export { type LoadOverrides, refuseRepositoryName } from "./load-overrides";
export { DEFAULT_REQUEST_LIMITS, type RequestLimits } from "./request-validation";
export type { InferenceTrace } from "./inference-request";
export {
  answerTraceSetting, DEFAULT_TRACE_SETTING, INT32_MAX, type RequestTrace, type TraceLevel, Tracer, type TraceSettingRequest, type TraceSettingValues, UINT32_MAX,
} from "./tracing/index";

export { answerTraceSetting } from "./trace-setting-answer";
export { DEFAULT_TRACE_SETTING, type TraceLevel, type TraceSettingRequest, type TraceSettingValues } from "./trace-settings";
export { RequestTrace } from "./request-trace";
export { Tracer, type TracerOptions } from "./tracer";

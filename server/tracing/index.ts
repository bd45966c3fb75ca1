export { answerTraceSetting } from "./trace-setting-answer";
export {
  DEFAULT_TRACE_SETTING, INT32_MAX, isTraceLevelName, type TraceLevel, traceLevelOf, type TraceSettingRequest, type TraceSettingValues, UINT32_MAX,
} from "./trace-settings";
export type { RequestTrace } from "./request-trace";
export { Tracer } from "./tracer";

import { InferenceError } from "../../core/index";
import { type TraceSettingRequest } from "../../tracing/index";

/**
 * A trace setting POST body (parsed JSON) as Triton reads it: each value a string, `trace_level` a list of strings, and `null`
 * to clear a value. The values themselves are the core's to check.
 */
export function traceSettingRequestOf(body: Record<string, unknown>): TraceSettingRequest {
  const request = new Map<string, readonly string[] | null>();
  for (const [key, value] of Object.entries(body)) {
    if (value === null) {
      request.set(key, null);
    } else if (key === "trace_level") {
      if (!Array.isArray(value) || !value.every((level): level is string => typeof level === "string")) {
        throw new InferenceError("INVALID_ARG", "'trace_level' must be an array of strings");
      }
      request.set(key, value);
    } else if (typeof value === "string") {
      request.set(key, [value]);
    } else {
      throw new InferenceError("INVALID_ARG", `'${key}' must be a string`);
    }
  }
  return request;
}

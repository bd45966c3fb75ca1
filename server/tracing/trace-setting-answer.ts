import { invalidArg } from "../core/index";
import type { Tracer } from "./tracer";
import { parseTraceSettingRequest, type TraceSettingRequest, traceSettingResponse } from "./trace-settings";

/**
 * Triton's trace setting endpoint, for both protocols: applies `request` when there is one (a POST), then answers
 * the setting in force. A model must be ready, as in Triton (INVALID_ARG otherwise); a bad request changes nothing.
 */
export function answerTraceSetting(
  tracer: Tracer, models: { modelReady(name: string): boolean }, modelName: string | undefined, request: TraceSettingRequest | undefined,
): Record<string, string | string[]> {
  if (modelName !== undefined && !models.modelReady(modelName)) throw invalidArg(`Request for unknown model : ${modelName}`);
  if (request !== undefined) tracer.update(modelName, parseTraceSettingRequest(request));
  return traceSettingResponse(tracer.setting(modelName));
}

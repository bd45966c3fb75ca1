import type { LogSettings, LogSettingsValues } from "../../logging/log-settings";
import type { LogSettingsRequest__Output } from "../../../protocol/grpc-types/longs-as-strings/inference/LogSettingsRequest";
import type { LogSettingsResponse } from "../../../protocol/grpc-types/longs-as-strings/inference/LogSettingsResponse";

/** Each setting's value as the member of its oneof that was set; none set reads as undefined, a wrong type. */
function updateOf(request: LogSettingsRequest__Output): Record<string, unknown> {
  return Object.fromEntries(Object.entries(request.settings).map(([name, value]) =>
    [name, value.parameter_choice === undefined ? undefined : value[value.parameter_choice]]));
}

function messageOf(settings: LogSettingsValues): LogSettingsResponse {
  return {
    settings: Object.fromEntries(Object.entries(settings).map(([name, value]) =>
      [name, typeof value === "boolean" ? { bool_param: value } : typeof value === "number" ? { uint32_param: value } : { string_param: value }])),
  };
}

/**
 * Triton's LogSettings RPC: applies the settings the request names (none: a read) and answers all of them. A refused
 * update changes nothing and ends the call INVALID_ARGUMENT, or UNIMPLEMENTED for a new log file, as in Triton.
 */
export function logSettingsRpc(logSettings: LogSettings, request: LogSettingsRequest__Output): LogSettingsResponse {
  return messageOf(logSettings.update(updateOf(request)));
}

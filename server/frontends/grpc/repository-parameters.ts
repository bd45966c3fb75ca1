import { clipped, InferenceError, type LoadOverrides } from "../../core/index";
import type { ModelRepositoryParameter__Output } from "../../../protocol/grpc-types/longs-as-strings/inference/ModelRepositoryParameter";

function invalid(message: string): InferenceError {
  return new InferenceError("INVALID_ARG", message);
}

/**
 * A RepositoryModelLoad request's `parameters` as Triton's gRPC frontend reads them, with its messages:
 * `config` must be a string_param (a JSON model config), each `file:<path>` a bytes_param (the file's contents),
 * and any other name is refused.
 */
export function loadOverridesOf(parameters: Readonly<Record<string, ModelRepositoryParameter__Output>>): LoadOverrides | undefined {
  let config: string | undefined;
  const files = new Map<string, Uint8Array>();
  for (const [key, parameter] of Object.entries(parameters)) {
    if (key === "config") {
      if (parameter.parameter_choice !== "string_param") throw invalid(`invalid value type for load parameter '${clipped(key)}', expected string_param.`);
      config = parameter.string_param ?? "";
    } else if (key.startsWith("file:")) {
      if (parameter.parameter_choice !== "bytes_param") throw invalid(`invalid value type for load parameter '${clipped(key)}', expected bytes_param.`);
      files.set(key, parameter.bytes_param ?? new Uint8Array(0));
    } else {
      throw invalid(`unrecognized load parameter '${clipped(key)}'.`);
    }
  }
  return config === undefined && files.size === 0 ? undefined : { config, files };
}

/** A RepositoryModelUnload request's `unload_dependents`, which must be a bool_param (false when absent). */
export function unloadDependentsOf(parameters: Readonly<Record<string, ModelRepositoryParameter__Output>>): boolean {
  const parameter = parameters["unload_dependents"];
  if (parameter === undefined) return false;
  if (parameter.parameter_choice !== "bool_param") throw invalid("invalid value type for 'unload_dependents' parameter, expected bool_param.");
  return parameter.bool_param === true;
}

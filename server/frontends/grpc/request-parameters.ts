import { clipped, InferenceError, type ParameterValue } from "../../core/index";
import type { InferParameter__Output } from "../../../protocol/grpc-types/longs-as-strings/inference/InferParameter";

export type InferParameterMap = Readonly<Record<string, InferParameter__Output>>;

type InferParameterChoice = NonNullable<InferParameter__Output["parameter_choice"]>;

/** Reserved request parameters and the value types Triton's gRPC frontend accepts for them. */
const RESERVED_PARAMETER_TYPES: Readonly<Record<string, readonly InferParameterChoice[]>> = {
  sequence_id: ["int64_param", "string_param", "uint64_param"],
  sequence_start: ["bool_param"],
  sequence_end: ["bool_param"],
  priority: ["int64_param", "uint64_param"],
  timeout: ["int64_param"],
  triton_enable_empty_final_response: ["bool_param"],
};

function invalid(message: string): InferenceError {
  return new InferenceError("INVALID_ARG", message);
}

/** A 64-bit integer exactly: a number while it is safe, a bigint beyond. */
function int64Value(text: string): number | bigint {
  const number = Number(text);
  return Number.isSafeInteger(number) ? number : BigInt(text);
}

function parameterValue(key: string, parameter: InferParameter__Output): ParameterValue {
  switch (parameter.parameter_choice) {
    case "bool_param": return parameter.bool_param === true;
    case "int64_param": return int64Value(parameter.int64_param ?? "0");
    case "uint64_param": return int64Value(parameter.uint64_param ?? "0");
    case "string_param": return parameter.string_param ?? "";
    case "double_param": return parameter.double_param ?? 0;
    default: throw invalid(`parameter '${clipped(key)}' has no value: set one of bool_param, int64_param, string_param, double_param or uint64_param`);
  }
}

/**
 * Request-level `parameters` -> the core's parameter record, with Triton's type rules for the reserved keys
 * (`timeout` must be int64_param, `priority` int64/uint64_param, ...). The core reads the values.
 */
export function decodeRequestParameters(parameters: InferParameterMap): Record<string, ParameterValue> {
  const decoded: Record<string, ParameterValue> = {};
  for (const [key, parameter] of Object.entries(parameters)) {
    const allowed = RESERVED_PARAMETER_TYPES[key];
    if (allowed !== undefined && (parameter.parameter_choice === undefined || !allowed.includes(parameter.parameter_choice))) {
      throw invalid(`invalid value type for '${clipped(key)}' parameter, expected ${allowed.join(" or ")}.`);
    }
    decoded[key] = parameterValue(key, parameter);
  }
  return decoded;
}

/** Triton's ParseClassificationParams: `classification` must be an int64_param; the core checks its value. */
export function classificationCount(parameters: InferParameterMap): number | undefined {
  const parameter = parameters["classification"];
  if (parameter === undefined) return undefined;
  if (parameter.parameter_choice !== "int64_param") {
    throw invalid("invalid value type for 'classification' parameter, expected int64_param.");
  }
  return Number(parameter.int64_param);
}

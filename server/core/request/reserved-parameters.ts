import type { ParameterValue } from "./inference-request";

/**
 * Request parameters that are Triton's own: the frontends and the scheduler read them (sequence ids and flags,
 * priority, timeout, binary output, the decoupled final-response switch) and Triton turns them into request fields
 * rather than passing them on as parameters (triton-inference-server/server src/http_server.cc and
 * src/grpc/infer_handler.cc, the keys they consume before TRITONSERVER_InferenceRequestSet*Parameter).
 */
const RESERVED_PARAMETER_KEYS: ReadonlySet<string> = new Set([
  "sequence_id", "sequence_start", "sequence_end", "priority", "timeout", "binary_data_output", "triton_enable_empty_final_response",
]);

const NONE: Readonly<Record<string, ParameterValue>> = Object.freeze({});

/** The parameters a model sees: the request's, without the reserved keys (copied only when it holds one). */
export function userParameters(parameters: Readonly<Record<string, ParameterValue>> | undefined): Readonly<Record<string, ParameterValue>> {
  if (parameters === undefined) return NONE;
  for (const key in parameters) {
    if (RESERVED_PARAMETER_KEYS.has(key)) return Object.fromEntries(Object.entries(parameters).filter(([name]) => !RESERVED_PARAMETER_KEYS.has(name)));
  }
  return parameters;
}

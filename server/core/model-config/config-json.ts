import { type Field, Type } from "protobufjs";
import { isLongType } from "./defaults";
import type { ModelConfig } from "./model-config";
import { modelConfigSchema } from "./schema";

/**
 * The 64-bit fields Triton prints as JSON numbers (core `model_config_utils.cc`, `ModelConfigToJson`);
 * protobuf prints every other 64-bit field as a string. Paths are field names from `ModelConfig`, with
 * `value` standing for a map's values. Triton means to fix `initial_state` dims too but looks them up in
 * the wrong object, so its JSON keeps them strings; we print the numbers it intends.
 */
const INT64_PRINTED_AS_NUMBER: ReadonlySet<string> = new Set([
  "input.dims",
  "input.reshape.shape",
  "output.dims",
  "output.reshape.shape",
  "version_policy.specific.versions",
  "dynamic_batching.max_queue_delay_microseconds",
  "dynamic_batching.priority_levels",
  "dynamic_batching.default_priority_level",
  "dynamic_batching.default_queue_policy.default_timeout_microseconds",
  "dynamic_batching.priority_queue_policy.value.default_timeout_microseconds",
  "sequence_batching.max_sequence_idle_microseconds",
  "sequence_batching.direct.max_queue_delay_microseconds",
  "sequence_batching.oldest.max_queue_delay_microseconds",
  "sequence_batching.state.dims",
  "sequence_batching.state.initial_state.dims",
  "ensemble_scheduling.step.model_version",
  "model_warmup.inputs.value.dims",
]);

/**
 * The JSON Triton's `GET /v2/models/{m}/config` returns for `config`: protobuf JSON with proto field names
 * and every field without presence printed, enums as names, unset messages and oneof members left out,
 * and 64-bit integers as strings except the ones Triton turns back into numbers (dims, reshape shapes,
 * versions, queue delays and timeouts, priority levels, sequence idle time, ensemble step versions).
 */
export function modelConfigToJson(config: ModelConfig): Record<string, unknown> {
  return tritonConfigJson(modelConfigSchema().modelConfigType, config);
}

/**
 * Prints a fully defaulted config (as `withProtoDefaults` makes it) the way Triton's `GET .../config`
 * does: protobuf JSON with proto field names and every field without presence printed (scalars with
 * their defaults, `[]`, `{}`), enums as names, unset messages and oneof members left out, 64-bit
 * integers as strings except Triton's list above.
 */
function tritonConfigJson(modelConfigType: Type, config: object): Record<string, unknown> {
  return messageJson(modelConfigType, config as Record<string, unknown>, "");
}

function messageJson(type: Type, message: Record<string, unknown>, path: string): Record<string, unknown> {
  const json: Record<string, unknown> = {};
  for (const field of type.fieldsArray) {
    const value = message[field.name];
    if (value === undefined) continue;
    const fieldPath = path === "" ? field.name : `${path}.${field.name}`;
    if (field.map) {
      json[field.name] = Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([key, element]) => [
          key,
          valueJson(field, element, `${fieldPath}.value`),
        ]),
      );
    } else if (field.repeated) {
      json[field.name] = (value as unknown[]).map((element) => valueJson(field, element, fieldPath));
    } else {
      json[field.name] = valueJson(field, value, fieldPath);
    }
  }
  return json;
}

function valueJson(field: Field, value: unknown, path: string): unknown {
  if (field.resolvedType instanceof Type) {
    return messageJson(field.resolvedType, value as Record<string, unknown>, path);
  }
  if (isLongType(field.type)) return INT64_PRINTED_AS_NUMBER.has(path) ? value : String(value);
  // Protobuf JSON spells non-finite floats "NaN", "Infinity" and "-Infinity", which is what String() gives.
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  return value;
}

import { Enum, type Field, type MapField, Type, types, util } from "protobufjs";
import type { ModelConfig } from "./model-config";
import { modelConfigSchema } from "./schema";

/**
 * Reads any protobufjs `inference.ModelConfig` message (decoded from the wire, `fromObject`, text or JSON
 * parse) into a fully defaulted `ModelConfig`. Throws, prefixed with `sourceName: `, on enum numbers the
 * schema does not name and 64-bit values beyond ±2^53.
 */
export function modelConfigFromMessage(message: object, sourceName: string): ModelConfig {
  try {
    return withProtoDefaults(modelConfigSchema().modelConfigType, message) as unknown as ModelConfig;
  } catch (error) {
    throw new Error(`${sourceName}: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Turns a protobufjs message of `type` (from `fromText`, protojson, `decode` or `fromObject`) into a plain
 * object keyed by proto field names with every field present, as proto3 reads it: unset scalars get their
 * defaults, repeated fields `[]`, maps `{}`, enums their value names, 64-bit integers JS numbers and map
 * keys decimal strings. Unset message fields and unset oneof members stay absent (not `undefined`-valued),
 * which keeps "present but empty" (`dynamic_batching { }`) apart from "absent". Throws on enum numbers the
 * schema does not name and on 64-bit values beyond `Number.MAX_SAFE_INTEGER`.
 */
export function withProtoDefaults(type: Type, message: object): Record<string, unknown> {
  const source = message as Record<string, unknown>;
  const result: Record<string, unknown> = {};
  for (const field of type.fieldsArray) {
    field.resolve();
    const value = source[field.name];
    const isSet = value !== undefined && value !== null && Object.prototype.hasOwnProperty.call(source, field.name);
    if (field.map) {
      const map = isSet ? (value as Record<string, unknown>) : {};
      result[field.name] = mapWithDefaults(field as unknown as MapField, map);
    } else if (field.repeated) {
      result[field.name] = isSet ? (value as unknown[]).map((element) => singleWithDefaults(field, element)) : [];
    } else if (isSet) {
      result[field.name] = singleWithDefaults(field, value);
    } else if (field.partOf === null && !(field.resolvedType instanceof Type)) {
      result[field.name] = scalarDefault(field);
    }
  }
  return result;
}

function mapWithDefaults(field: MapField, map: Record<string, unknown>): Record<string, unknown> {
  const unsignedKey = field.keyType === "uint64" || field.keyType === "fixed64";
  const isLongKey = isLongType(field.keyType);
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(map)) {
    // Decoded 64-bit keys arrive as protobufjs' 8-character hashes; text and JSON give decimal strings.
    const decimalKey = isLongKey ? String(util.longFromKey(key, unsignedKey)) : key;
    result[decimalKey] = singleWithDefaults(field as unknown as Field, value);
  }
  return result;
}

function singleWithDefaults(field: Field, value: unknown): unknown {
  const resolvedType = field.resolvedType;
  if (resolvedType instanceof Type) return withProtoDefaults(resolvedType, value as object);
  if (resolvedType instanceof Enum) return enumName(field, resolvedType, value);
  if (isLongType(field.type)) return safeNumber(field, value);
  if (field.type === "float") return shortestFloat32(Number(value));
  if (field.type === "double") return Number(value);
  return value;
}

function scalarDefault(field: Field): unknown {
  const resolvedType = field.resolvedType;
  if (resolvedType instanceof Enum) return enumName(field, resolvedType, 0);
  if (field.type === "string") return "";
  if (field.type === "bool") return false;
  return 0;
}

function enumName(field: Field, enumType: Enum, value: unknown): string {
  const name = typeof value === "number" ? enumType.valuesById[value] : value;
  if (typeof name !== "string" || enumType.values[name] === undefined) {
    throw new Error(`${displayName(field)}: unknown enum value ${String(value)}`);
  }
  return name;
}

/** Whether a protobuf scalar type is 64-bit, which protobuf JSON prints as a string. */
export function isLongType(scalarType: string): boolean {
  return Object.prototype.hasOwnProperty.call(types.long, scalarType);
}

function safeNumber(field: Field, value: unknown): number {
  // Long objects print as exact decimals; anything past ±(2^53 - 1) lands on a number isSafeInteger rejects.
  const number = typeof value === "number" ? value : Number(String(value));
  if (!Number.isSafeInteger(number)) {
    throw new Error(`${displayName(field)}: ${String(value)} is not an integer within ±2^53`);
  }
  return number;
}

/**
 * The shortest decimal that is the same float32, as protobuf prints floats: a text value `0.1` and the
 * same value after a binary round trip (0.10000000149011612) both come out as `0.1`.
 */
function shortestFloat32(value: number): number {
  if (!Number.isFinite(value)) return value;
  const float32 = Math.fround(value);
  for (let digits = 1; digits < 9; digits += 1) {
    const candidate = Number(float32.toPrecision(digits));
    if (Math.fround(candidate) === float32) return candidate;
  }
  return Number(float32.toPrecision(9));
}

function displayName(field: Field): string {
  return field.fullName.replace(/^\./, "");
}

/**
 * The KServe v2 / Triton datatype table: protocol names, config enum names and element sizes. A leaf
 * module with no imports, shared by every layer (frontends, core, backends, model builder).
 */

/** Protocol datatype strings, as on the wire (REST `datatype`, gRPC `datatype`). */
export const DATATYPES = [
  "BOOL", "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32", "INT64",
  "FP16", "FP32", "FP64", "BYTES", "BF16",
] as const;

export type DataType = (typeof DATATYPES)[number];

/** Config (`model_config.proto` DataType enum) names, e.g. `TYPE_FP32`; `TYPE_STRING` is protocol `BYTES`. */
export type ConfigDataType =
  | "TYPE_INVALID" | "TYPE_BOOL" | "TYPE_UINT8" | "TYPE_UINT16" | "TYPE_UINT32" | "TYPE_UINT64"
  | "TYPE_INT8" | "TYPE_INT16" | "TYPE_INT32" | "TYPE_INT64" | "TYPE_FP16" | "TYPE_FP32" | "TYPE_FP64"
  | "TYPE_STRING" | "TYPE_BF16";

/** Bytes per element; 0 for BYTES, whose elements are 4-byte-length-prefixed and variable. */
export const ELEMENT_BYTE_SIZE: Readonly<Record<DataType, number>> = {
  BOOL: 1, UINT8: 1, UINT16: 2, UINT32: 4, UINT64: 8, INT8: 1, INT16: 2, INT32: 4, INT64: 8,
  FP16: 2, FP32: 4, FP64: 8, BYTES: 0, BF16: 2,
};

const DATATYPE_SET: ReadonlySet<unknown> = new Set(DATATYPES);

export function isDataType(value: unknown): value is DataType {
  return DATATYPE_SET.has(value);
}

export function dataTypeFromConfig(configType: ConfigDataType): DataType | undefined {
  if (configType === "TYPE_STRING") return "BYTES";
  if (configType === "TYPE_INVALID") return undefined;
  const name = configType.slice("TYPE_".length);
  return isDataType(name) ? name : undefined;
}

export function dataTypeToConfig(dataType: DataType): ConfigDataType {
  return dataType === "BYTES" ? "TYPE_STRING" : (`TYPE_${dataType}` as ConfigDataType);
}

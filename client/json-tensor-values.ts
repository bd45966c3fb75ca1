import type { DataType } from "../protocol/datatypes";
import { type NumericTensorData, type TensorData, type TensorDataByType, toTensorData } from "./tensor-data";

const decoder = new TextDecoder();

/** FP16 and BF16 have no JSON form in KServe v2 (Triton rejects them); they always travel as binary. */
export function hasJsonForm(datatype: DataType): boolean {
  return datatype !== "FP16" && datatype !== "BF16";
}

/**
 * A tensor as the JSON text of a flat `data` array. 64-bit integers keep every digit; BYTES elements are written
 * as UTF-8 strings (bytes that are not UTF-8 need the binary format); NaN and infinities have no JSON spelling
 * and are rejected rather than sent as something else.
 */
export function tensorDataToJson(datatype: DataType, data: TensorData, tensorName: string): string {
  if (!hasJsonForm(datatype)) throw new TypeError(`input '${tensorName}': ${datatype} cannot be sent as JSON; use the binary tensor format`);
  if (datatype === "BYTES") return JSON.stringify((data as Uint8Array[]).map((element) => decoder.decode(element)));
  const typed = data as NumericTensorData;
  if (datatype === "BOOL") return `[${Array.from(typed as Uint8Array, (value) => (value ? "true" : "false")).join(",")}]`;
  if (datatype === "FP32" || datatype === "FP64") {
    for (const value of typed as Float32Array) {
      if (!Number.isFinite(value)) throw new TypeError(`input '${tensorName}' holds ${value}, which JSON cannot carry; use the binary tensor format`);
    }
  }
  return `[${typed.join(",")}]`;
}

function flatten(values: unknown, out: unknown[]): void {
  if (Array.isArray(values)) {
    for (const value of values) flatten(value, out);
  } else {
    out.push(values);
  }
}

/** A JSON `data` array (flat or nested, 64-bit integers possibly as bigint) -> the typed array of `datatype`. */
export function jsonToTensorData<T extends DataType>(datatype: T, values: unknown, tensorName: string): TensorDataByType[T] {
  const flat: unknown[] = [];
  flatten(values, flat);
  if (datatype === "FP32" || datatype === "FP64") {
    // Triton (and this server) write NaN and infinities by name; servers that write null mean NaN.
    return toTensorData(datatype, flat.map((value) => (value === null ? Number.NaN : value)) as number[], tensorName);
  }
  return toTensorData(datatype, flat as number[], tensorName);
}

import { float16Value } from "../../../protocol/float16";
import { type DataType, ELEMENT_BYTE_SIZE } from "../../../protocol/datatypes";
import { invalidArg } from "../errors";
import type { OutputTensor } from "./inference-request";
import { joinBytesElements } from "./tensor";

const MAX_CLASSIFICATION_ELEMENTS = 1_000_000;
const encoder = new TextEncoder();

/** Reads element i of a little-endian tensor as a number (FP16 widened; we classify FP16, which Triton cannot). */
function reader(datatype: DataType, view: DataView): ((i: number) => number) | undefined {
  switch (datatype) {
    case "UINT8": return (i) => view.getUint8(i);
    case "INT8": return (i) => view.getInt8(i);
    case "UINT16": return (i) => view.getUint16(i * 2, true);
    case "INT16": return (i) => view.getInt16(i * 2, true);
    case "UINT32": return (i) => view.getUint32(i * 4, true);
    case "INT32": return (i) => view.getInt32(i * 4, true);
    case "UINT64": return (i) => Number(view.getBigUint64(i * 8, true));
    case "INT64": return (i) => Number(view.getBigInt64(i * 8, true));
    case "FP16": return (i) => float16Value(view.getUint16(i * 2, true));
    case "FP32": return (i) => view.getFloat32(i * 4, true);
    case "FP64": return (i) => view.getFloat64(i * 8, true);
    default: return undefined;
  }
}

/** C++ std::to_string, which Triton uses: floats with 6 decimals, integers as integers. */
function formatValue(datatype: DataType, value: number): string {
  return datatype === "FP16" || datatype === "FP32" || datatype === "FP64" ? value.toFixed(6) : String(value);
}

/**
 * Triton's classification extension: replaces an output with a BYTES tensor of the top `k` classes per batch
 * item, each `"<value>:<index>[:<label>]"`, shape `[batch, k]` (or `[k]` without batching).
 */
export function classify(output: OutputTensor, k: number, batching: boolean, labels: readonly string[] | undefined): OutputTensor {
  const read = reader(output.datatype, new DataView(output.data.buffer, output.data.byteOffset, output.data.byteLength));
  if (read === undefined) throw invalidArg(`class result not available for output '${output.name}' due to unsupported type '${output.datatype}'`);
  const total = output.data.byteLength / ELEMENT_BYTE_SIZE[output.datatype];
  if (total > MAX_CLASSIFICATION_ELEMENTS) throw invalidArg(`output '${output.name}' has too many elements (${total}) for classification`);
  const batch = batching ? (output.shape[0] ?? 1) : 1;
  const perItem = batch > 0 ? total / batch : 0;
  const count = Math.min(k, perItem);
  const elements: Uint8Array[] = [];
  for (let b = 0; b < batch; b++) {
    const indices = Array.from({ length: perItem }, (_, i) => i);
    const base = b * perItem;
    indices.sort((x, y) => read(base + y) - read(base + x) || x - y);
    for (const index of indices.slice(0, count)) {
      const label = labels?.[index];
      const text = `${formatValue(output.datatype, read(base + index))}:${index}${label !== undefined ? `:${label}` : ""}`;
      elements.push(encoder.encode(text));
    }
  }
  return { name: output.name, datatype: "BYTES", shape: batching ? [batch, count] : [count], data: joinBytesElements(elements) };
}

import { type DataType, elementCount, type Tensor } from "../core/index";

/**
 * Triton's rendering of a tensor's values in a TENSORS-level trace (server src/tracer.cc, TraceTensorActivity):
 * the elements joined by commas, each as C++'s `std::ostream <<` writes its type. The result is the text of the
 * entry's `data` string, unescaped: the caller JSON-escapes it, where Triton writes it raw (and so writes broken
 * JSON for a `"`, a control character or a byte that is not UTF-8). Undefined once the text would pass `maxChars`
 * (for BYTES, once the elements' bytes would): rendering stops there, so a large tensor costs at most that much.
 */
export function tensorTraceData(tensor: Tensor, maxChars: number): string | undefined {
  const { data, datatype } = tensor;
  const count = elementCount(tensor.shape);
  if (datatype === "BYTES") return bytesElements(data, count, maxChars);
  const render = RENDERERS[datatype];
  if (render === undefined) return "";
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const elements = Math.min(count, Math.floor(data.byteLength / render.size));
  const parts = new Array<string>(elements);
  let chars = 0;
  for (let i = 0; i < elements; i++) {
    const part = render.at(view, i * render.size);
    chars += part.length + 1;
    if (chars > maxChars + 1) return undefined;
    parts[i] = part;
  }
  return parts.join(",");
}

interface Renderer {
  readonly size: number;
  at(view: DataView, offset: number): string;
}

const UTF8 = new TextDecoder("utf-8");

/**
 * Per datatype; FP16 and BF16 are absent: Triton leaves their data empty. BOOL is 0 or 1 (a bool streamed without
 * std::boolalpha); UINT8 and INT8 are one character each (C++ streams (un)signed char as a character), which we read
 * as Latin-1 (one code point per byte) so that every byte keeps its value.
 */
const RENDERERS: Partial<Record<DataType, Renderer>> = {
  BOOL: { size: 1, at: (view, offset) => (view.getUint8(offset) === 0 ? "0" : "1") },
  UINT8: { size: 1, at: (view, offset) => String.fromCharCode(view.getUint8(offset)) },
  INT8: { size: 1, at: (view, offset) => String.fromCharCode(view.getUint8(offset)) },
  UINT16: { size: 2, at: (view, offset) => String(view.getUint16(offset, true)) },
  INT16: { size: 2, at: (view, offset) => String(view.getInt16(offset, true)) },
  UINT32: { size: 4, at: (view, offset) => String(view.getUint32(offset, true)) },
  INT32: { size: 4, at: (view, offset) => String(view.getInt32(offset, true)) },
  UINT64: { size: 8, at: (view, offset) => String(view.getBigUint64(offset, true)) },
  INT64: { size: 8, at: (view, offset) => String(view.getBigInt64(offset, true)) },
  FP32: { size: 4, at: (view, offset) => formatG(view.getFloat32(offset, true), (view.getUint8(offset + 3) & 0x80) !== 0) },
  FP64: { size: 8, at: (view, offset) => formatG(view.getFloat64(offset, true), (view.getUint8(offset + 7) & 0x80) !== 0) },
};

/** Each element as `"text"`; as Triton, a malformed element ends the data there. */
function bytesElements(data: Uint8Array, count: number, maxChars: number): string | undefined {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const parts: string[] = [];
  let chars = 0;
  let offset = 0;
  for (let e = 0; e < count && offset + 4 <= data.byteLength; e++) {
    const length = view.getUint32(offset, true);
    offset += 4;
    if (offset + length > data.byteLength) break;
    // A UTF-8 byte is at most one character: what the element would add is known before decoding it.
    chars += length + 3;
    if (chars > maxChars + 1) return undefined;
    parts.push(`"${UTF8.decode(data.subarray(offset, offset + length))}"`);
    offset += length;
  }
  return parts.join(",");
}

const SIGNIFICANT_DIGITS = 6;

/**
 * A float as C++'s default stream format writes it: printf's `%g` at precision 6 (rounding half to even on an
 * exact tie, as glibc does), `inf` and `nan` spelled so, and the sign taken from the sign bit, so NaNs that carry
 * one print as `-nan` and negative zero as `-0`.
 */
export function formatG(value: number, negative: boolean): string {
  const sign = negative ? "-" : "";
  if (Number.isNaN(value)) return `${sign}nan`;
  if (!Number.isFinite(value)) return `${sign}inf`;
  if (value === 0) return `${sign}0`;
  // 100 significant digits hold every decimal a tie needs exactly: a double on a tie has 7 significant digits.
  const [mantissa, exponentText] = Math.abs(value).toExponential(99).split("e") as [string, string];
  const digits = mantissa.replace(".", "");
  let exponent = Number(exponentText);
  let head = Number(digits.slice(0, SIGNIFICANT_DIGITS));
  const next = digits[SIGNIFICANT_DIGITS]!;
  const beyondHalf = /[1-9]/.test(digits.slice(SIGNIFICANT_DIGITS + 1));
  if (next > "5" || (next === "5" && (beyondHalf || head % 2 === 1))) head++;
  if (head === 10 ** SIGNIFICANT_DIGITS) {
    head /= 10;
    exponent++;
  }
  const kept = String(head);
  if (exponent < -4 || exponent >= SIGNIFICANT_DIGITS) {
    const fraction = kept.slice(1).replace(/0+$/, "");
    const exponentDigits = String(Math.abs(exponent)).padStart(2, "0");
    return `${sign}${kept[0]}${fraction === "" ? "" : `.${fraction}`}e${exponent < 0 ? "-" : "+"}${exponentDigits}`;
  }
  const integer = exponent >= 0 ? kept.slice(0, exponent + 1) : "0";
  const fraction = (exponent >= 0 ? kept.slice(exponent + 1) : "0".repeat(-exponent - 1) + kept).replace(/0+$/, "");
  return `${sign}${integer}${fraction === "" ? "" : `.${fraction}`}`;
}

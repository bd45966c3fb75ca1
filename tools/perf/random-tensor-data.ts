import type { DataType, TensorData } from "../../client/index";
import { float16Bits } from "../../protocol/float16";
import type { SeededRandom } from "../model-builder/index";

const float32 = new Float32Array(1);
const float32Bits = new Uint32Array(float32.buffer);

function toBfloat16Bits(value: number): number {
  float32[0] = value;
  return float32Bits[0]! >>> 16;
}

/**
 * `count` elements of `datatype`: uniform [0, 1) for floating point, [0, 100) for integers (valid for every
 * integer type), 0/1 for BOOL, 8 lowercase letters per BYTES element. Without a `random` source every element is zero (BYTES: empty).
 */
export function randomTensorData(datatype: DataType, count: number, random: SeededRandom | undefined): TensorData {
  const next = (): number => random?.nextFloat() ?? 0;
  const integer = (): number => Math.floor(next() * 100);
  switch (datatype) {
    case "FP32": return Float32Array.from({ length: count }, next);
    case "FP64": return Float64Array.from({ length: count }, next);
    case "FP16": return Uint16Array.from({ length: count }, () => float16Bits(next()));
    case "BF16": return Uint16Array.from({ length: count }, () => toBfloat16Bits(next()));
    case "BOOL": return Uint8Array.from({ length: count }, () => Math.round(next()));
    case "UINT8": return Uint8Array.from({ length: count }, integer);
    case "INT8": return Int8Array.from({ length: count }, integer);
    case "UINT16": return Uint16Array.from({ length: count }, integer);
    case "INT16": return Int16Array.from({ length: count }, integer);
    case "UINT32": return Uint32Array.from({ length: count }, integer);
    case "INT32": return Int32Array.from({ length: count }, integer);
    case "UINT64": return BigUint64Array.from({ length: count }, () => BigInt(integer()));
    case "INT64": return BigInt64Array.from({ length: count }, () => BigInt(integer()));
    case "BYTES": {
      const encoder = new TextEncoder();
      return Array.from({ length: count }, () =>
        encoder.encode(random === undefined ? "" : Array.from({ length: 8 }, () => String.fromCharCode(97 + Math.floor(next() * 26))).join("")));
    }
  }
}

/**
 * bfloat16 (Triton's BF16), carried as its 16-bit patterns in a Uint16Array, as FP16 is (./float16.ts): the upper
 * half of a float32, rounded to nearest, ties to even. A leaf module with no imports.
 */

const float32 = new Float32Array(1);
const float32Bits = new Uint32Array(float32.buffer);

/** The bfloat16 bits nearest to `value` (NaN stays a quiet NaN). */
export function bfloat16Bits(value: number): number {
  float32[0] = value;
  const bits = float32Bits[0]!;
  if (Number.isNaN(value)) return ((bits >>> 16) & 0x8000) | 0x7fc0;
  return ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
}

/** The value of bfloat16 `bits` (exact). */
export function bfloat16Value(bits: number): number {
  float32Bits[0] = (bits & 0xffff) << 16;
  return float32[0]!;
}

/** Every element of `values` as bfloat16 bits. */
export function toBfloat16Array(values: ArrayLike<number>): Uint16Array {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = bfloat16Bits(values[i]!);
  return out;
}

/** Every element of bfloat16 `bits` as a float. */
export function fromBfloat16Array(bits: Uint16Array): Float32Array {
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = bfloat16Value(bits[i]!);
  return out;
}

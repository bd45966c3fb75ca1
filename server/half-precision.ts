/**
 * FP16 (IEEE 754 binary16) and BF16 (bfloat16) conversion: tensors of these types travel as their 16-bit
 * patterns in Uint16Arrays, and JavaScript computes in float32/float64. Rounding is to nearest, ties to even.
 * A leaf module with no imports, shared by the core (classification), the TypeScript backend's published
 * helpers and the tests.
 */

const f32 = new Float32Array(1);
const f32Bits = new Uint32Array(f32.buffer);

/** float -> FP16 bits. Out of range becomes ±Infinity, NaN stays NaN, tiny values become subnormals or ±0. */
export function float32ToFp16(value: number): number {
  f32[0] = value;
  const bits = f32Bits[0]!;
  const sign = (bits >>> 16) & 0x8000;
  const biased = (bits >>> 23) & 0xff;
  let mantissa = bits & 0x7fffff;
  if (biased === 0xff) return sign | 0x7c00 | (mantissa !== 0 ? 0x200 : 0);
  const exponent = biased - 127 + 15;
  if (exponent <= 0) {
    if (exponent < -10) return sign;
    mantissa |= 0x800000;
    const shift = 14 - exponent;
    const half = mantissa >> shift;
    const rest = mantissa & ((1 << shift) - 1);
    const midpoint = 1 << (shift - 1);
    return sign | (half + (rest > midpoint || (rest === midpoint && (half & 1) !== 0) ? 1 : 0));
  }
  if (exponent >= 31) return sign | 0x7c00;
  const half = (exponent << 10) | (mantissa >> 13);
  const rest = mantissa & 0x1fff;
  // A carry out of the mantissa rounds up into the exponent, and from the largest finite value to Infinity.
  return sign | (half + (rest > 0x1000 || (rest === 0x1000 && (half & 1) !== 0) ? 1 : 0));
}

/** FP16 bits -> float (exact). */
export function fp16ToFloat32(bits: number): number {
  const exponent = (bits >> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  const magnitude = exponent === 0
    ? mantissa * 2 ** -24
    : exponent === 0x1f ? (mantissa !== 0 ? NaN : Infinity) : (1 + mantissa / 1024) * 2 ** (exponent - 15);
  return (bits & 0x8000) !== 0 ? -magnitude : magnitude;
}

/** float -> BF16 bits: the upper half of the float32, rounded. */
export function float32ToBf16(value: number): number {
  f32[0] = value;
  const bits = f32Bits[0]!;
  if (Number.isNaN(value)) return ((bits >>> 16) & 0x8000) | 0x7fc0;
  return ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
}

/** BF16 bits -> float (exact). */
export function bf16ToFloat32(bits: number): number {
  f32Bits[0] = (bits & 0xffff) << 16;
  return f32[0]!;
}

/** Every element of `values` as FP16 bits, ready to be an FP16 tensor's data. */
export function float32ToFp16Array(values: ArrayLike<number>): Uint16Array {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = float32ToFp16(values[i]!);
  return out;
}

export function fp16ToFloat32Array(bits: ArrayLike<number>): Float32Array {
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = fp16ToFloat32(bits[i]!);
  return out;
}

export function float32ToBf16Array(values: ArrayLike<number>): Uint16Array {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = float32ToBf16(values[i]!);
  return out;
}

export function bf16ToFloat32Array(bits: ArrayLike<number>): Float32Array {
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = bf16ToFloat32(bits[i]!);
  return out;
}

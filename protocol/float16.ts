/**
 * IEEE 754 half precision (Triton's FP16), carried as its 16-bit patterns in a Uint16Array because Node 20 has no
 * Float16Array. Shared by the model builder, the load generator and the client. A leaf module with no imports.
 */

const float32 = new Float32Array(1);
const float32Bits = new Uint32Array(float32.buffer);

/** The half-precision bits nearest to `value` (round to nearest, ties to even; overflow to infinity; NaN kept). */
export function float16Bits(value: number): number {
  float32[0] = value;
  const bits = float32Bits[0]!;
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  const mantissa = bits & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa !== 0 ? 0x200 : 0);
  const halfExponent = exponent - 127 + 15;
  if (halfExponent >= 0x1f) return sign | 0x7c00;
  if (halfExponent <= 0) {
    // Subnormal half (or zero): shift the mantissa, implicit bit included, into place and round.
    if (halfExponent < -10) return sign;
    const full = mantissa | 0x800000;
    const shift = 14 - halfExponent;
    const rounded = (full >>> shift) + roundingIncrement(full, shift);
    return sign | rounded;
  }
  // A carry out of the mantissa moves into the exponent, which is the correctly rounded result (up to infinity).
  return (sign | (halfExponent << 10) | (mantissa >>> 13)) + roundingIncrement(mantissa, 13);
}

/** 1 when the bits shifted out round the kept part up (more than half, or exactly half with an odd kept part). */
function roundingIncrement(bits: number, shift: number): number {
  const half = 1 << (shift - 1);
  const rest = bits & ((1 << shift) - 1);
  return rest > half || (rest === half && ((bits >>> shift) & 1) === 1) ? 1 : 0;
}

/** The value of half-precision `bits`. */
export function float16Value(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >>> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 0x1f) return mantissa !== 0 ? NaN : sign * Infinity;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

/** Every element of `values` as half-precision bits. */
export function toFloat16Array(values: ArrayLike<number>): Uint16Array {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = float16Bits(values[i]!);
  return out;
}

/** Every element of half-precision `bits` as a float. */
export function fromFloat16Array(bits: Uint16Array): Float32Array {
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = float16Value(bits[i]!);
  return out;
}

import { describe, expect, it } from "vitest";
import {
  bf16ToFloat32, bf16ToFloat32Array, float32ToBf16, float32ToBf16Array, float32ToFp16, float32ToFp16Array, fp16ToFloat32, fp16ToFloat32Array,
} from "../../server/half-precision";

describe("FP16 conversion", () => {
  it.each([
    [1, 0x3c00], [-2, 0xc000], [65504, 0x7bff], [2 ** -24, 0x0001], [Infinity, 0x7c00], [-Infinity, 0xfc00], [0, 0], [-0, 0x8000],
    [0.1, 0x2e66], [65520, 0x7c00], [1e-8, 0],
  ])("%d <-> 0x%s", (value, bits) => {
    expect(float32ToFp16(value)).toBe(bits);
    if (value !== 0.1 && value !== 65520 && value !== 1e-8) expect(Object.is(fp16ToFloat32(bits), value)).toBe(true);
  });

  it("rounds to nearest, ties to even, and keeps NaN a NaN", () => {
    // 1 + 2^-11 lies halfway between 1 (even mantissa) and 1 + 2^-10: ties go to 1.
    expect(float32ToFp16(1 + 2 ** -11)).toBe(0x3c00);
    expect(float32ToFp16(1 + 3 * 2 ** -11)).toBe(0x3c02);
    expect(Number.isNaN(fp16ToFloat32(float32ToFp16(NaN)))).toBe(true);
  });

  it("round-trips every FP16 value exactly", () => {
    const bits = Uint16Array.from({ length: 0x10000 }, (_, i) => i).filter((b) => (b & 0x7c00) !== 0x7c00 || (b & 0x3ff) === 0);
    expect(float32ToFp16Array(fp16ToFloat32Array(bits))).toEqual(bits);
  });
});

describe("BF16 conversion", () => {
  it("keeps the upper half of the float32, rounded to nearest even", () => {
    expect(float32ToBf16(1)).toBe(0x3f80);
    expect(float32ToBf16(-2)).toBe(0xc000);
    expect(bf16ToFloat32(0x3f80)).toBe(1);
    expect(float32ToBf16(1 + 2 ** -8)).toBe(0x3f80); // halfway, ties to even
    expect(float32ToBf16(1 + 3 * 2 ** -8)).toBe(0x3f82);
    expect(Number.isNaN(bf16ToFloat32(float32ToBf16(NaN)))).toBe(true);
    const [half, three, huge] = bf16ToFloat32Array(float32ToBf16Array([0.5, 3, -1e30]));
    expect([half, three]).toEqual([0.5, 3]);
    expect(Math.abs(huge! / -1e30 - 1)).toBeLessThan(2 ** -8);
  });
});

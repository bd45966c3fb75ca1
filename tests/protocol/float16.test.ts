import { describe, expect, it } from "vitest";
import { float16Bits, float16Value, fromFloat16Array, toFloat16Array } from "../../protocol/float16";

describe("half precision (FP16) conversion", () => {
  it.each([
    [0, 0x0000], [-0, 0x8000], [1, 0x3c00], [-2, 0xc000], [0.5, 0x3800], [65504, 0x7bff], [1 / 3, 0x3555],
    [2 ** -14, 0x0400], [2 ** -24, 0x0001], [Infinity, 0x7c00], [-Infinity, 0xfc00],
  ])("encodes %s as 0x%s", (value, bits) => {
    expect(float16Bits(value)).toBe(bits);
    expect(float16Value(bits)).toBe(value === 1 / 3 ? 0.333251953125 : value);
  });

  it("rounds to nearest, ties to even, overflowing to infinity and underflowing to zero", () => {
    expect(float16Bits(1 + 2 ** -11)).toBe(0x3c00); // exactly half way: the even neighbour (1.0)
    expect(float16Bits(1 + 3 * 2 ** -11)).toBe(0x3c02); // half way above an odd mantissa: rounds up to even
    expect(float16Bits(1 + 2 ** -11 + 2 ** -20)).toBe(0x3c01); // above half way: up
    expect(float16Bits(65520)).toBe(0x7c00); // rounds past the largest half
    expect(float16Bits(65519)).toBe(0x7bff);
    expect(float16Bits(2 ** -25)).toBe(0x0000); // half the smallest subnormal: ties to even (zero)
    expect(float16Bits(2 ** -25 * 1.5)).toBe(0x0001);
    expect(float16Bits(3 * 2 ** -25)).toBe(0x0002); // between subnormals 1 and 2, exactly half: even
    expect(float16Bits(2 ** -14 - 2 ** -25)).toBe(0x0400); // the largest subnormal rounds up into the normals
  });

  it("keeps NaN a NaN and round-trips every finite half exactly", () => {
    expect(Number.isNaN(float16Value(float16Bits(NaN)))).toBe(true);
    const changed: number[] = [];
    for (let bits = 0; bits < 0x10000; bits++) {
      if (((bits >>> 10) & 0x1f) !== 0x1f && float16Bits(float16Value(bits)) !== bits) changed.push(bits);
    }
    expect(changed).toEqual([]);
    expect([...fromFloat16Array(toFloat16Array([0.1, -3.5, 1000]))]).toEqual([0.0999755859375, -3.5, 1000]);
  });
});

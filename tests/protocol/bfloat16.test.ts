import { describe, expect, it } from "vitest";
import { bfloat16Bits, bfloat16Value, fromBfloat16Array, toBfloat16Array } from "../../protocol/bfloat16";

describe("bfloat16 conversion", () => {
  it("keeps the upper half of the float32, rounded to nearest even", () => {
    expect(bfloat16Bits(1)).toBe(0x3f80);
    expect(bfloat16Bits(-2)).toBe(0xc000);
    expect(bfloat16Value(0x3f80)).toBe(1);
    expect(bfloat16Bits(1 + 2 ** -8)).toBe(0x3f80); // halfway, ties to even
    expect(bfloat16Bits(1 + 3 * 2 ** -8)).toBe(0x3f82);
    expect(bfloat16Bits(Infinity)).toBe(0x7f80);
    expect(Number.isNaN(bfloat16Value(bfloat16Bits(NaN)))).toBe(true);
  });

  it("converts arrays, exactly for values bfloat16 holds", () => {
    const [half, three, huge] = fromBfloat16Array(toBfloat16Array([0.5, 3, -1e30]));
    expect([half, three]).toEqual([0.5, 3]);
    expect(Math.abs(huge! / -1e30 - 1)).toBeLessThan(2 ** -8);
  });
});

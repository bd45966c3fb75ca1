import { describe, expect, it } from "vitest";
import { fromBfloat16Array, fromFloat16Array, toBfloat16Array, toFloat16Array } from "../../client/index";

describe("the package's FP16 and BF16 helpers (docs/client.md)", () => {
  it("turn numbers into the Uint16Array bit patterns an FP16/BF16 input carries, and back", () => {
    const half = toFloat16Array([0.5, -2, 65504]);
    expect(half).toBeInstanceOf(Uint16Array);
    expect([...half]).toEqual([0x3800, 0xc000, 0x7bff]);
    expect([...fromFloat16Array(half)]).toEqual([0.5, -2, 65504]);
    expect([...toBfloat16Array([1.5])]).toEqual([0x3fc0]);
    expect([...fromBfloat16Array(toBfloat16Array([1.5, -3]))]).toEqual([1.5, -3]);
  });
});

import { describe, expect, it } from "vitest";
import {
  computeScaleZeroPoint, fakeQuantize, quantizeBias, quantizeWeightsPerChannel, roundHalfToEven,
} from "../../../tools/optimize/quant-math";

describe("quantization arithmetic (ONNX Runtime's quant_utils.py)", () => {
  it("rounds half to even, as numpy.round and QuantizeLinear do", () => {
    expect([0.5, 1.5, 2.5, -0.5, -1.5, 2.4, 2.6].map(roundHalfToEven)).toEqual([0, 2, 2, 0, -2, 2, 3]);
  });

  it("widens the range to hold zero and puts the zero point where 0.0 lands (asymmetric UINT8)", () => {
    // [0.5, 2.55] widens to [0, 2.55]: scale 0.01, zero point 0.
    const positive = computeScaleZeroPoint(0.5, 2.55, "uint8", false);
    expect(positive.scale).toBeCloseTo(0.01, 7);
    expect(positive.zeroPoint).toBe(0);
    // [-1, 3]: scale 4/255, zero point round(0 + 1 / (4/255)) = round(63.75) = 64.
    const mixed = computeScaleZeroPoint(-1, 3, "uint8", false);
    expect(mixed.scale).toBe(Math.fround(4 / 255));
    expect(mixed.zeroPoint).toBe(64);
    // INT8 asymmetric: qmin -128, so zero point = round(-128 + 1 / scale).
    expect(computeScaleZeroPoint(-1, 3, "int8", false).zeroPoint).toBe(-64);
  });

  it("gives scale 1 and zero point 0 to an all-zero range", () => {
    expect(computeScaleZeroPoint(0, 0, "uint8", false)).toEqual({ scale: 1, zeroPoint: 0 });
  });

  it("quantizes weights symmetric INT8 per output channel: absmax / 127, zero point 0", () => {
    const weights = Float32Array.of(1, -2, 0.5, 0.25, 0.1, -0.05);
    const { quantized, scales } = quantizeWeightsPerChannel(weights, [2, 3], 0);
    expect([...scales]).toEqual([Math.fround(2 / 127), Math.fround(0.25 / 127)]);
    expect([...quantized]).toEqual([64, -127, 32, 127, 51, -25]);
  });

  it("quantizes the bias to INT32 at input scale x weight scale", () => {
    const { quantized, scales } = quantizeBias(Float32Array.of(0.3, -0.2), 0.01, Float32Array.of(0.5, 0.25));
    expect([...scales]).toEqual([Math.fround(0.005), Math.fround(0.0025)]);
    expect([...quantized]).toEqual([60, -80]);
  });

  it("fake-quantizes: values clamp to the range's ends and land on the grid", () => {
    const params = computeScaleZeroPoint(0, 2.55, "uint8", false);
    expect(fakeQuantize(-1, params, "uint8")).toBe(0);
    expect(fakeQuantize(10, params, "uint8")).toBeCloseTo(2.55, 5);
    expect(fakeQuantize(1.234, params, "uint8")).toBeCloseTo(1.23, 5);
  });
});

import * as ort from "onnxruntime-node";
import { describe, expect, it } from "vitest";
import { SeededRandom } from "../../../tools/model-builder/index";
import { calibrateRanges } from "../../../tools/optimize/calibrate";
import { DATA_TYPE } from "../../../tools/optimize/onnx-model";
import { activationsToCalibrate, quantizeQdq } from "../../../tools/optimize/qdq-quantizer";
import { computeScaleZeroPoint, fakeQuantize, quantizeBias, quantizeWeightsPerChannel, quantRange, quantizeValue, dequantizeValue } from "../../../tools/optimize/quant-math";
import { floatValues } from "../../../tools/optimize/tensor-data";
import { convModel, randomValues, runSingle } from "./onnx-test-models";

const SHAPE = [1, 2, 6, 6];

describe("QDQ quantization of a Conv + Relu", () => {
  it("matches ONNX Runtime running the FP32 model on hand-quantized input, weights and bias, to one output step", async () => {
    const random = new SeededRandom(7);
    const fp32 = convModel({ batchNorm: false, seed: 3 });
    const samples = Array.from({ length: 4 }, () => randomValues(random, 72, -2, 2));
    const tensors = activationsToCalibrate(fp32);
    expect(tensors.sort()).toEqual(["X", "Y", "conv"]);

    const ranges = await calibrateRanges(fp32, tensors, samples.map((s) => ({ X: new ort.Tensor("float32", s, SHAPE) })), { method: "minmax" });
    // MinMax: the extremes over all samples, of the FP32 model's own values.
    const outputs = await Promise.all(samples.map((s) => runSingle(fp32, "X", s, SHAPE)));
    // (Calibration runs ONNX Runtime at basic optimization, without the Conv+Relu fusion: float rounding may differ.)
    expect(ranges.get("Y")!.max).toBeCloseTo(Math.max(...outputs.flatMap((o) => [...o])), 5);
    expect(ranges.get("X")!.min).toBe(Math.min(...samples.flatMap((s) => [...s])));

    const quantized = quantizeQdq(fp32, ranges, { activationType: "uint8", perChannel: true });
    const ops = quantized.graph.node.map((n) => n.op_type);
    // The Conv output takes the Relu's range (it is read by the Relu only); the Relu stays, as it writes a graph output.
    expect(ops).toContain("Relu");
    expect(ops.filter((op) => op === "QuantizeLinear")).toHaveLength(3);
    const weight = quantized.graph.initializer.find((t) => t.name === "W_quantized")!;
    expect(weight.data_type).toBe(DATA_TYPE.INT8);
    expect(quantized.graph.initializer.find((t) => t.name === "B_quantized")!.data_type).toBe(DATA_TYPE.INT32);

    // The same arithmetic by hand: fake-quantized weights and bias in an FP32 model, fed fake-quantized input.
    const w = floatValues(fp32.graph.initializer.find((t) => t.name === "W")!);
    const b = floatValues(fp32.graph.initializer.find((t) => t.name === "B")!);
    const inParams = computeScaleZeroPoint(ranges.get("X")!.min, ranges.get("X")!.max, "uint8", false);
    const outParams = computeScaleZeroPoint(ranges.get("Y")!.min, ranges.get("Y")!.max, "uint8", false);
    const wq = quantizeWeightsPerChannel(w, [4, 2, 3, 3], 0);
    const wFake = Float32Array.from(wq.quantized, (q, i) => q * wq.scales[Math.floor(i / 18)]!);
    const bq = quantizeBias(b, inParams.scale, wq.scales);
    const bFake = Float32Array.from(bq.quantized, (q, i) => q * bq.scales[i]!);
    const handModel = convModel({ batchNorm: false, seed: 3, weights: wFake, bias: bFake });
    const { qmin, qmax } = quantRange("uint8", false);

    for (const sample of samples) {
      const xFake = Float32Array.from(sample, (v) => fakeQuantize(v, inParams, "uint8"));
      const reference = await runSingle(handModel, "X", xFake, SHAPE);
      const expected = Float32Array.from(reference, (v) => dequantizeValue(quantizeValue(v, outParams, qmin, qmax), outParams));
      const actual = await runSingle(quantized, "X", sample, SHAPE);
      let steps = 0;
      for (let i = 0; i < actual.length; i++) steps = Math.max(steps, Math.round(Math.abs(actual[i]! - expected[i]!) / outParams.scale));
      // ONNX Runtime fuses DQ-Conv-Q into QLinearConv and requantizes in integers: at most one step apart.
      expect(steps).toBeLessThanOrEqual(1);
      // And close to the FP32 model itself.
      const exact = await runSingle(fp32, "X", sample, SHAPE);
      for (let i = 0; i < actual.length; i++) expect(Math.abs(actual[i]! - exact[i]!)).toBeLessThan(outParams.scale * 4);
    }
  });

  it("keeps the model's input and output names and FLOAT types", async () => {
    const fp32 = convModel({ batchNorm: false, seed: 5 });
    const ranges = new Map([["X", { min: -2, max: 2 }], ["conv", { min: -1, max: 1 }], ["Y", { min: 0, max: 1 }]]);
    const quantized = quantizeQdq(fp32, ranges, { activationType: "int8", perChannel: false });
    expect(quantized.graph.input.map((i) => [i.name, i.type?.tensor_type?.elem_type])).toEqual([["X", DATA_TYPE.FLOAT]]);
    expect(quantized.graph.output.map((o) => [o.name, o.type?.tensor_type?.elem_type])).toEqual([["Y", DATA_TYPE.FLOAT]]);
    const zeroPoint = quantized.graph.initializer.find((t) => t.name === "X_zero_point")!;
    expect(zeroPoint.data_type).toBe(DATA_TYPE.INT8);
    // Per tensor: one weight scale.
    expect(quantized.graph.initializer.find((t) => t.name === "W_scale")!.dims).toEqual([]);
    const out = await runSingle(quantized, "X", new Float32Array(72).fill(0.5), SHAPE);
    expect(out).toHaveLength(144);
  });

  it("leaves excluded nodes in float", () => {
    const fp32 = convModel({ batchNorm: false, seed: 5 });
    const ranges = new Map([["X", { min: -2, max: 2 }], ["conv", { min: -1, max: 1 }], ["Y", { min: 0, max: 1 }]]);
    const quantized = quantizeQdq(fp32, ranges, { activationType: "uint8", perChannel: true, nodesToExclude: ["conv"] });
    const conv = quantized.graph.node.find((n) => n.op_type === "Conv")!;
    expect(conv.input).toEqual(["X", "W", "B"]);
    expect(quantized.graph.initializer.some((t) => t.data_type === DATA_TYPE.INT8)).toBe(false);
  });

  it("refuses a model below opset 13", () => {
    const model = convModel({ batchNorm: false, seed: 1 });
    model.opset_import = [{ domain: "", version: 11 }];
    expect(() => quantizeQdq(model, new Map(), { activationType: "uint8", perChannel: true })).toThrow(/opset 13/);
  });
});

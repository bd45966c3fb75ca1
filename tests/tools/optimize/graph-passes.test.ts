import * as ort from "onnxruntime-node";
import { describe, expect, it } from "vitest";
import { OnnxGraphBuilder, SeededRandom } from "../../../tools/model-builder/index";
import { eliminateNoOps } from "../../../tools/optimize/eliminate-dropout";
import { quantizeDynamic } from "../../../tools/optimize/dynamic-quantizer";
import { float16ToFloat32 } from "../../../tools/optimize/float16-to-float32";
import { float32ToFloat16 } from "../../../tools/optimize/float32-to-float16";
import { foldBatchNormIntoConv } from "../../../tools/optimize/fold-batch-norm";
import { EntropyHistogram } from "../../../tools/optimize/entropy-histogram";
import { HistogramCollector } from "../../../tools/optimize/histogram";
import { DATA_TYPE, decodeOnnxModel } from "../../../tools/optimize/onnx-model";
import { upgradeToQdqOpset } from "../../../tools/optimize/upgrade-opset";
import { convModel, maxAbsDiff, randomValues, runModel, runSingle } from "./onnx-test-models";

const random = new SeededRandom(11);
const input = randomValues(random, 72, -2, 2);

describe("foldBatchNormIntoConv", () => {
  it("removes the BatchNormalization and computes the same output", async () => {
    const model = convModel({ batchNorm: true, seed: 2 });
    const folded = foldBatchNormIntoConv(model);
    expect(folded.graph.node.map((n) => n.op_type)).toEqual(["Conv", "Relu"]);
    expect(folded.graph.initializer.map((t) => t.name).sort()).toEqual(["W_bn_folded", "conv_bias_bn_folded"]);
    expect(maxAbsDiff(await runSingle(folded, "X", input, [1, 2, 6, 6]), await runSingle(model, "X", input, [1, 2, 6, 6]))).toBeLessThan(1e-5);
  });
});

/** X [1,8] -> MatMul W [8,4] -> Max(., C) (a blocked operator) -> Y [1,4]. */
function matMulMaxModel(opset = 13): ReturnType<typeof decodeOnnxModel> {
  const graph = new OnnxGraphBuilder("matmul_max");
  graph.addInput("X", "FLOAT", [1, 8]);
  graph.addInitializer("W", [8, 4], randomValues(new SeededRandom(4), 32));
  graph.addInitializer("C", [4], Float32Array.of(0.1, -0.1, 0, 0.2));
  graph.addNode({ opType: "MatMul", inputs: ["X", "W"], outputs: ["mm"] });
  graph.addNode({ opType: "Max", inputs: ["mm", "C"], outputs: ["Y"] });
  graph.addOutput("Y", "FLOAT", [1, 4]);
  return decodeOnnxModel(graph.toModelBytes({ opsetVersion: opset }));
}

describe("float32ToFloat16", () => {
  const x = randomValues(new SeededRandom(9), 8);

  it("with keep-io-types: FP16 weights and compute, FLOAT at the edges, blocked operators in FP32 between Casts", async () => {
    const model = matMulMaxModel();
    const half = float32ToFloat16(model, { keepIoTypes: true });
    expect(half.graph.input[0]!.type?.tensor_type?.elem_type).toBe(DATA_TYPE.FLOAT);
    expect(half.graph.output[0]!.type?.tensor_type?.elem_type).toBe(DATA_TYPE.FLOAT);
    expect(half.graph.initializer.find((t) => t.name === "W")!.data_type).toBe(DATA_TYPE.FLOAT16);
    // C is read by the blocked Max only: it stays FLOAT.
    expect(half.graph.initializer.find((t) => t.name === "C")!.data_type).toBe(DATA_TYPE.FLOAT);
    const max = half.graph.node.find((n) => n.op_type === "Max")!;
    expect(max.input[0]).toBe("mm_fp32");
    expect(half.graph.node.filter((n) => n.op_type === "Cast")).toHaveLength(4);
    const expected = await runSingle(model, "X", x, [1, 8]);
    expect(maxAbsDiff(await runSingle(half, "X", x, [1, 8]), expected)).toBeLessThan(1e-2);
  });

  it("without keep-io-types: FLOAT16 inputs and outputs", async () => {
    const half = float32ToFloat16(matMulMaxModel(), { keepIoTypes: false });
    expect(half.graph.input[0]!.type?.tensor_type?.elem_type).toBe(DATA_TYPE.FLOAT16);
    expect(half.graph.output[0]!.type?.tensor_type?.elem_type).toBe(DATA_TYPE.FLOAT16);
    const bits = Uint16Array.from(x, () => 0x3c00); // 1.0 in FP16
    const out = await runModel(half, { X: new ort.Tensor("float16", bits, [1, 8]) });
    expect(out["Y"]!.type).toBe("float16");
  });
});

describe("float16ToFloat32", () => {
  it("widens FP16 weights and I/O exactly", async () => {
    const graph = new OnnxGraphBuilder("half");
    graph.addInput("X", "FLOAT16", [1, 4]);
    graph.addFloat16Initializer("B", [4], Float32Array.of(0.5, 1.25, -2, 3));
    graph.addNode({ opType: "Add", inputs: ["X", "B"], outputs: ["Y"] });
    graph.addOutput("Y", "FLOAT16", [1, 4]);
    const wide = float16ToFloat32(decodeOnnxModel(graph.toModelBytes()));
    expect(wide.graph.initializer[0]!.data_type).toBe(DATA_TYPE.FLOAT);
    expect([...(await runSingle(wide, "X", Float32Array.of(1, 1, 1, 1), [1, 4]))]).toEqual([1.5, 2.25, -1, 4]);
  });
});

describe("upgradeToQdqOpset", () => {
  it("keeps an opset-11 Softmax's meaning (normalize over all axes after the first) at opset 13", async () => {
    const graph = new OnnxGraphBuilder("softmax");
    graph.addInput("X", "FLOAT", [1, 4, 1, 1]);
    graph.addNode({ opType: "Softmax", inputs: ["X"], outputs: ["Y"] });
    graph.addOutput("Y", "FLOAT", [1, 4, 1, 1]);
    const old = decodeOnnxModel(graph.toModelBytes({ opsetVersion: 11, irVersion: 6 }));
    const upgraded = upgradeToQdqOpset(old);
    expect(upgraded.opset_import[0]!.version).toBe(13);
    const x = Float32Array.of(1, 2, 3, 4);
    const expected = await runSingle(old, "X", x, [1, 4, 1, 1]);
    expect(maxAbsDiff(await runSingle(upgraded, "X", x, [1, 4, 1, 1]), expected)).toBeLessThan(1e-6);
    expect(expected[3]).toBeGreaterThan(0.5);
  });
});

describe("eliminateNoOps", () => {
  it("wires Dropout's readers to its input", () => {
    const graph = new OnnxGraphBuilder("dropout");
    graph.addInput("X", "FLOAT", [1, 4]);
    graph.addNode({ opType: "Dropout", inputs: ["X"], outputs: ["d"] });
    graph.addNode({ opType: "Relu", inputs: ["d"], outputs: ["Y"] });
    graph.addOutput("Y", "FLOAT", [1, 4]);
    const model = eliminateNoOps(decodeOnnxModel(graph.toModelBytes()));
    expect(model.graph.node.map((n) => [n.op_type, n.input[0]])).toEqual([["Relu", "X"]]);
  });
});

describe("quantizeDynamic", () => {
  it("turns MatMul into DynamicQuantizeLinear + MatMulInteger and stays close to FP32", async () => {
    const model = matMulMaxModel();
    const dynamic = quantizeDynamic(model);
    const ops = dynamic.graph.node.map((n) => n.op_type);
    expect(ops).toContain("MatMulInteger");
    expect(ops).toContain("DynamicQuantizeLinear");
    const x = randomValues(new SeededRandom(3), 8);
    // Error bound: 8 products, each off by at most half an input step x |w| + half a weight step x |x|.
    expect(maxAbsDiff(await runSingle(dynamic, "X", x, [1, 8]), await runSingle(model, "X", x, [1, 8]))).toBeLessThan(0.05);
  });
});

describe("HistogramCollector (percentile calibration)", () => {
  it("cuts (100 - p) / 2 % of |x| off each side, clipped to the values seen", () => {
    const histogram = new HistogramCollector(100);
    const values = Float32Array.from({ length: 1000 }, (_, i) => i / 10); // 0 .. 99.9
    histogram.collectAbsolute(values);
    const range = histogram.percentileRange(90, { min: 0, max: 99.9 });
    // 100 bins of width 0.999, ~10 values each: the CDF reaches 95 % in bin 94, whose left edge numpy returns.
    expect(range.max).toBeCloseTo(94 * 0.999, 4);
    expect(range.min).toBe(0);
    // A later, wider sample adds bins of the same width instead of rebinning.
    histogram.collectAbsolute(Float32Array.of(150));
    const wide = histogram.percentileRange(100, { min: 0, max: 150 }).max;
    expect(wide).toBeGreaterThan(149);
    expect(wide).toBeLessThanOrEqual(150);
  });
});

describe("EntropyHistogram (entropy calibration)", () => {
  const random = new SeededRandom(5);
  // A bell of 20,000 values in [-1, 1] (sum of 4 uniforms, scaled) and one outlier at 4.
  const values = Float32Array.from({ length: 20_000 }, () => (random.nextFloat() + random.nextFloat() + random.nextFloat() + random.nextFloat() - 2) / 2);
  const withOutlier = Float32Array.of(...values, 4);

  it("with ONNX Runtime's default 128 bins has one candidate window: the whole range seen", () => {
    const histogram = new EntropyHistogram(128, 128);
    histogram.collect(withOutlier);
    const range = histogram.entropyRange();
    expect(range.max).toBe(4);
    expect(range.min).toBe(Math.min(...values));
  });

  it("with 2048 bins clips the outlier and keeps the bell", () => {
    const histogram = new EntropyHistogram(2048, 128);
    histogram.collect(values.subarray(0, 10_000));
    // The second sample is wider: bins of the same width are added on both sides.
    histogram.collect(withOutlier.subarray(10_000));
    const range = histogram.entropyRange();
    expect(range.max).toBeLessThan(2);
    expect(range.max).toBeGreaterThan(0.5);
    expect(range.min).toBeLessThan(-0.5);
  });
});

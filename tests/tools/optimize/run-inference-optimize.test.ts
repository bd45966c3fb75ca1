import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import * as ort from "onnxruntime-node";
import { afterAll, describe, expect, it } from "vitest";
import { SeededRandom } from "../../../tools/model-builder/index";
import {
  decodeOnnxModel, encodeOnnxModel, imageTensor, modelInputs, OptimizeError, parseOptimizeOptions, prepareFloat32, runInferenceOptimize,
  type OnnxModel, type OptimizeOptions,
} from "../../../tools/optimize/index";
import { parseModelConfigText } from "../../../server/core/index";
import { SHARED_DATA } from "../../helpers/server-process";
import { convModel, randomValues } from "./onnx-test-models";

const workDir = mkdtempSync(path.join(os.tmpdir(), "inference-optimize-test-"));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

const quiet = { stdout: { write: () => true }, stderr: { write: () => true } };
const SQUEEZENET = path.join(SHARED_DATA, "models", "squeezenet1.1_fp16", "SqueezeNet_fp16.onnx");
const IMAGES = path.join(SHARED_DATA, "images");
const COFFEE_MUG = 504;

function options(overrides: Partial<OptimizeOptions> & Pick<OptimizeOptions, "model" | "outDir" | "precisions">): OptimizeOptions {
  return {
    name: undefined, keepIoTypes: false, calibrationData: undefined, validationData: undefined, labels: undefined, maxSamples: 50, preprocess: "unit",
    calibrateMethod: "minmax", percentile: 99.999, histogramBins: undefined, activationType: "uint8", perChannel: true, opBlockList: undefined, nodesToExclude: [], speed: false, concurrencies: [1],
    rounds: 1, warmupMs: 100, measurementMs: 300, reportDir: path.join(workDir, "report"), ...overrides,
  };
}

async function classify(model: OnnxModel, values: Float32Array): Promise<{ top1: number; output: Float32Array }> {
  const input = modelInputs(model)[0]!;
  const session = await ort.InferenceSession.create(encodeOnnxModel(model));
  const result = await session.run({ [input.name]: new ort.Tensor("float32", values, [...input.dims]) });
  await session.release();
  const output = result[session.outputNames[0]!]!.data as Float32Array;
  return { top1: output.indexOf(Math.max(...output)), output };
}

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  return a.reduce((max, v, i) => Math.max(max, Math.abs(v - b[i]!)), 0);
}

describe("inference-optimize on SqueezeNet 1.1 (the shared FP16 model, widened to FP32)", () => {
  it("writes FP16 and INT8 Triton models that classify mug.jpg as the FP32 model does", async () => {
    const outDir = path.join(workDir, "squeezenet");
    // The shared data README's expected classes: mug 504, kitten 281, fish 0 (and image.jpg's 977, SANDBAR).
    const labels = path.join(workDir, "labels.txt");
    writeFileSync(labels, "# file class\nmug.jpg 504\nkitten_224.png 281\nfish.png 0\nimage.jpg 977\n");
    const output = await runInferenceOptimize(options({
      model: SQUEEZENET, name: "squeezenet", outDir, precisions: ["fp16", "int8"], keepIoTypes: true,
      calibrationData: IMAGES, validationData: IMAGES, preprocess: "caffe-bgr", labels,
    }), quiet);
    expect(output.variants.map((v) => v.name)).toEqual(["squeezenet_fp16", "squeezenet_int8"]);
    for (const result of output.results) {
      expect(result.accuracy!.top1Agreement).toBe(1);
      expect(result.accuracy!.labelled).toEqual({ samples: 4, referenceTop1: 1, variantTop1: 1 });
    }

    const fp32 = prepareFloat32(decodeOnnxModel(readFileSync(SQUEEZENET)));
    const mug = await imageTensor(path.join(IMAGES, "mug.jpg"), modelInputs(fp32)[0]!, "caffe-bgr");
    const reference = await classify(fp32, mug);
    expect(reference.top1).toBe(COFFEE_MUG);
    const load = (name: string): OnnxModel => decodeOnnxModel(readFileSync(path.join(outDir, name, "1", "model.onnx")));
    const fp16 = await classify(load("squeezenet_fp16"), mug);
    const int8 = await classify(load("squeezenet_int8"), mug);
    expect([fp16.top1, int8.top1]).toEqual([COFFEE_MUG, COFFEE_MUG]);
    // The tolerances the docs state: FP16 within 2e-3 of FP32 probabilities, INT8 within 0.1 (UINT8 softmax output
    // has steps of 1/255).
    expect(maxAbsDiff(fp16.output, reference.output)).toBeLessThan(2e-3);
    expect(maxAbsDiff(int8.output, reference.output)).toBeLessThan(0.1);

    const config = readFileSync(path.join(outDir, "squeezenet_fp16", "config.pbtxt"), "utf8");
    expect(config).toContain('name: "squeezenet_fp16"');
    expect(config).toMatch(/name: "data_0"\s+data_type: TYPE_FP32/);
    // The T4 alternative is a configuration the server reads: the TensorRT provider at INT8, on a GPU instance.
    const t4 = parseModelConfigText(readFileSync(path.join(outDir, "squeezenet_int8", "configs", "t4.pbtxt"), "utf8"), "t4.pbtxt");
    expect(t4.optimization?.execution_accelerators?.gpu_execution_accelerator[0]).toMatchObject({ name: "tensorrt", parameters: { precision_mode: "INT8" } });
    expect(t4.instance_group[0]?.kind).toBe("KIND_GPU");
    expect(readFileSync(path.join(outDir, "squeezenet_fp16", "configs", "t4.pbtxt"), "utf8")).toContain('value: "FP16"');
  });
});

describe("inference-optimize on a Triton model directory", () => {
  it("keeps the config's settings, and both variants serve in this server (served A/B)", async () => {
    const modelDir = path.join(workDir, "input", "conv");
    mkdirSync(path.join(modelDir, "1"), { recursive: true });
    writeFileSync(path.join(modelDir, "1", "model.onnx"), encodeOnnxModel(convModel({ batchNorm: true, seed: 8 })));
    writeFileSync(path.join(modelDir, "config.pbtxt"), [
      'name: "conv"', 'platform: "onnxruntime_onnx"', "max_batch_size: 0",
      'input [ { name: "X" data_type: TYPE_FP32 dims: [ 1, 2, 6, 6 ] } ]',
      'output [ { name: "Y" data_type: TYPE_FP32 dims: [ 1, 4, 6, 6 ] } ]',
      "instance_group [ { count: 2 kind: KIND_CPU } ]", "",
    ].join("\n"));
    const dataDir = path.join(workDir, "tensors");
    mkdirSync(dataDir);
    const random = new SeededRandom(21);
    for (let i = 0; i < 3; i++) writeFileSync(path.join(dataDir, `sample${i}.raw`), randomValues(random, 72, -2, 2));

    const outDir = path.join(workDir, "conv-out");
    const output = await runInferenceOptimize(options({
      model: modelDir, outDir, precisions: ["int8", "fp16"], calibrationData: dataDir, validationData: dataDir, speed: true,
    }), quiet);
    const fp16Config = readFileSync(path.join(outDir, "conv_fp16", "config.pbtxt"), "utf8");
    // FP16 I/O without --keep-io-types; the instance settings stay.
    expect(fp16Config).toContain('input [ { name: "X" data_type: TYPE_FP16');
    expect(fp16Config).toContain("instance_group [ { count: 2 kind: KIND_CPU } ]");
    for (const result of output.results) {
      expect(result.speed!.best.variant.throughput).toBeGreaterThan(0);
      expect(result.speed!.best.baseline.throughput).toBeGreaterThan(0);
      expect(result.accuracy!.maxAbsDiff).toBeLessThan(0.1);
    }
    expect(readFileSync(output.reportHtml!, "utf8")).toContain("<svg");
  });

  it("refuses to write into the input's folder", async () => {
    await expect(runInferenceOptimize(options({
      model: SQUEEZENET, outDir: path.dirname(SQUEEZENET), precisions: ["fp16"],
    }), quiet)).rejects.toThrow(OptimizeError);
  });
});

describe("parseOptimizeOptions", () => {
  it("needs calibration data for static INT8", () => {
    expect(() => parseOptimizeOptions(["--model", "m.onnx", "--precision", "int8", "--out", "o"])).toThrow(/--calibration-data/);
  });

  it("reads precisions and defaults", () => {
    const parsed = parseOptimizeOptions(["--model", "m.onnx", "--precision", "fp16,int8-dynamic", "--out", "o", "--keep-io-types"]);
    expect(parsed.precisions).toEqual(["fp16", "int8-dynamic"]);
    expect(parsed.keepIoTypes).toBe(true);
    expect(parsed.perChannel).toBe(true);
    expect(parsed.concurrencies).toEqual([1, 2]);
    expect(parsed.opBlockList).toBeUndefined();
    expect(parsed.nodesToExclude).toEqual([]);
  });

  it("reads the block list and the nodes to exclude", () => {
    const parsed = parseOptimizeOptions(["--model", "m.onnx", "--precision", "fp16", "--out", "o", "--op-block-list", "Softmax, TopK",
      "--nodes-to-exclude", "conv1,fc"]);
    expect(parsed.opBlockList).toEqual(["Softmax", "TopK"]);
    expect(parsed.nodesToExclude).toEqual(["conv1", "fc"]);
  });
});

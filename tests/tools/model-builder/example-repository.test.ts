import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as ort from "onnxruntime-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildExampleRepository, STAMP_FILE_NAME } from "../../../tools/model-builder/build-example-repository";
import { ensureExampleRepository } from "../../../tools/model-builder/ensure-example-repository";
import { loadOnnxSchema } from "../../../tools/model-builder/onnx-schema";
import { MLP_FEATURES } from "../../../tools/model-builder/models/mlp-model";
import { SHARED_DATA } from "../../helpers/server-process";

const SEED = 1234;
const ONNX_IDENTITY_MODELS = [
  "identity_bool", "identity_uint8", "identity_uint16", "identity_uint32", "identity_uint64", "identity_int8",
  "identity_int16", "identity_int32", "identity_int64", "identity_fp16", "identity_fp32", "identity_fp64",
  "identity_bytes",
];
const IMAGE_CLASSIFIER_MODELS = ["image_classifier", "image_preprocess", "squeezenet", "image_postprocess", "image_classifier_bls"];
const ALL_MODELS = ["simple", ...ONNX_IDENTITY_MODELS, "identity_bf16", "resnet50", "mlp", "text_generator", "text_words", ...IMAGE_CLASSIFIER_MODELS];

let workDir: string;
let repositoryDir: string;

beforeAll(async () => {
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), "example-repository-"));
  repositoryDir = path.join(workDir, "models");
  await buildExampleRepository(repositoryDir, { seed: SEED });
});

afterAll(() => {
  fs.rmSync(workDir, { recursive: true, force: true });
});

function modelPath(model: string): string {
  return path.join(repositoryDir, model, "1", "model.onnx");
}

async function runModel(model: string, feeds: Record<string, ort.Tensor>): Promise<ort.InferenceSession.ReturnType> {
  const session = await ort.InferenceSession.create(modelPath(model), { executionProviders: ["cpu"] });
  try {
    return await session.run(feeds);
  } finally {
    await session.release();
  }
}

function outputOf(results: ort.InferenceSession.ReturnType, name: string): ort.Tensor {
  const tensor = results[name];
  if (tensor === undefined) throw new Error(`no output ${name}`);
  return tensor;
}

/** Relative path -> SHA-256 of every file under `dir`. */
function fileHashes(dir: string): Map<string, string> {
  const hashes = new Map<string, string>();
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const filePath = path.join(entry.parentPath, entry.name);
    hashes.set(path.relative(dir, filePath), crypto.createHash("sha256").update(fs.readFileSync(filePath)).digest("hex"));
  }
  return new Map([...hashes].sort(([a], [b]) => a.localeCompare(b)));
}

describe("example repository layout", () => {
  it("holds exactly the example models, each a Triton model directory with version 1, and the stamp of its build", () => {
    expect(fs.readdirSync(repositoryDir).sort()).toEqual([...ALL_MODELS, STAMP_FILE_NAME].sort());
    for (const model of ALL_MODELS) {
      expect(fs.statSync(path.join(repositoryDir, model, "config.pbtxt")).isFile()).toBe(true);
      expect(fs.statSync(path.join(repositoryDir, model, "1")).isDirectory()).toBe(true);
    }
    expect(fs.existsSync(path.join(repositoryDir, "identity_bf16", "1", "model.onnx"))).toBe(false);
  });

  it("writes configs in Triton's text format with the expected names, types and batching", () => {
    for (const model of ALL_MODELS) {
      const config = fs.readFileSync(path.join(repositoryDir, model, "config.pbtxt"), "utf8");
      expect(config.startsWith(`name: "${model}"\n`)).toBe(true);
      expect(config).toMatch(/^max_batch_size: \d+$/m);
      expect(config).toMatch(/^input \[\n[\s\S]*^\]\noutput \[\n[\s\S]*^\]$/m);
      expect(config.split("{").length).toBe(config.split("}").length);
      for (const [, dataType] of config.matchAll(/data_type: (\S+)/g)) {
        expect(dataType).toMatch(/^TYPE_(BOOL|U?INT(8|16|32|64)|FP(16|32|64)|STRING|BF16)$/);
      }
    }
    const read = (model: string) => fs.readFileSync(path.join(repositoryDir, model, "config.pbtxt"), "utf8");
    expect(read("identity_bytes")).toContain("data_type: TYPE_STRING\n    dims: [ -1 ]");
    expect(read("identity_bf16")).toContain('backend: "identity"\nmax_batch_size: 8\n');
    expect(read("identity_bf16")).toContain("data_type: TYPE_BF16");
    expect(read("resnet50")).toContain('platform: "onnxruntime_onnx"\nmax_batch_size: 8\n');
    expect(read("resnet50")).toContain("format: FORMAT_NCHW\n    dims: [ 3, 224, 224 ]");
    expect(read("resnet50")).toContain('label_filename: "labels.txt"');
    expect(read("resnet50")).toMatch(/\ndynamic_batching \{ \}\ninstance_group \[\n {2}\{\n {4}count: 1\n {4}kind: KIND_CPU\n/);
    expect(read("resnet50")).toMatch(/\nmodel_warmup \[\n {2}\{\n {4}name: "zero_image"\n {4}batch_size: 1\n {4}inputs \{\n {6}key: "input"\n {6}value \{\n {8}data_type: TYPE_FP32\n {8}dims: \[ 3, 224, 224 \]\n {8}zero_data: true\n/);
    expect(read("mlp")).toContain("max_batch_size: 64\n");
    expect(read("mlp")).toContain("dynamic_batching {\n  max_queue_delay_microseconds: 500\n}");
  });

  it("ships 1000 generated labels for resnet50", () => {
    const labels = fs.readFileSync(path.join(repositoryDir, "resnet50", "labels.txt"), "utf8").split("\n");
    expect(labels.pop()).toBe("");
    expect(labels).toHaveLength(1000);
    expect(labels[0]).toBe("CLASS_0000");
    expect(labels[999]).toBe("CLASS_0999");
  });
});

describe("simple", () => {
  it.each([1, 3])("adds and subtracts INT32 [%i,16]", async (batchSize) => {
    const input0 = Int32Array.from({ length: batchSize * 16 }, (_, i) => i % 16);
    const input1 = new Int32Array(batchSize * 16).fill(1);
    const results = await runModel("simple", {
      INPUT0: new ort.Tensor("int32", input0, [batchSize, 16]),
      INPUT1: new ort.Tensor("int32", input1, [batchSize, 16]),
    });
    const sums = Array.from({ length: batchSize }, () => Array.from({ length: 16 }, (_, i) => i + 1)).flat();
    const differences = Array.from({ length: batchSize }, () => Array.from({ length: 16 }, (_, i) => i - 1)).flat();
    expect(outputOf(results, "OUTPUT0").dims).toEqual([batchSize, 16]);
    expect(Array.from(outputOf(results, "OUTPUT0").data as Int32Array)).toEqual(sums);
    expect(Array.from(outputOf(results, "OUTPUT1").data as Int32Array)).toEqual(differences);
  });
});

describe("identity models", () => {
  const cases: { model: string; input: () => ort.Tensor }[] = [
    { model: "identity_bool", input: () => new ort.Tensor("bool", Uint8Array.from([1, 0, 0, 1, 1, 0]), [2, 3]) },
    { model: "identity_uint8", input: () => new ort.Tensor("uint8", Uint8Array.from([0, 1, 127, 128, 254, 255]), [2, 3]) },
    { model: "identity_uint16", input: () => new ort.Tensor("uint16", Uint16Array.from([0, 1, 2, 3, 65_534, 65_535]), [2, 3]) },
    { model: "identity_uint32", input: () => new ort.Tensor("uint32", Uint32Array.from([0, 1, 2, 3, 2 ** 31, 2 ** 32 - 1]), [2, 3]) },
    { model: "identity_uint64", input: () => new ort.Tensor("uint64", BigUint64Array.from([0n, 1n, 2n, 3n, 2n ** 63n, 2n ** 64n - 1n]), [2, 3]) },
    { model: "identity_int8", input: () => new ort.Tensor("int8", Int8Array.from([-128, -1, 0, 1, 2, 127]), [2, 3]) },
    { model: "identity_int16", input: () => new ort.Tensor("int16", Int16Array.from([-32_768, -1, 0, 1, 2, 32_767]), [2, 3]) },
    { model: "identity_int32", input: () => new ort.Tensor("int32", Int32Array.from([-(2 ** 31), -1, 0, 1, 2, 2 ** 31 - 1]), [2, 3]) },
    { model: "identity_int64", input: () => new ort.Tensor("int64", BigInt64Array.from([-(2n ** 63n), -1n, 0n, 1n, 2n, 2n ** 63n - 1n]), [2, 3]) },
    // FP16 travels as its raw bit patterns: 1.0, -2.0, 65504, smallest subnormal, +inf, 0.
    { model: "identity_fp16", input: () => new ort.Tensor("float16", Uint16Array.from([0x3c00, 0xc000, 0x7bff, 0x0001, 0x7c00, 0]), [2, 3]) },
    { model: "identity_fp32", input: () => new ort.Tensor("float32", Float32Array.from([-1.5, 0, 3.25, 1e-30, 3e38, -0]), [2, 3]) },
    { model: "identity_fp64", input: () => new ort.Tensor("float64", Float64Array.from([-1.5, 0, Math.PI, 1e-300, 1e300, 2 ** 53]), [2, 3]) },
    { model: "identity_bytes", input: () => new ort.Tensor("string", ["", "a", "héllo", "with space", "tab\t", "🙂"], [2, 3]) },
  ];

  it("covers every ONNX identity model in the repository", () => {
    expect(cases.map((testCase) => testCase.model)).toEqual(ONNX_IDENTITY_MODELS);
  });

  it.each(cases)("$model returns its input unchanged", async ({ model, input }) => {
    const tensor = input();
    const output = outputOf(await runModel(model, { INPUT0: tensor }), "OUTPUT0");
    expect(output.type).toBe(tensor.type);
    expect(output.dims).toEqual([2, 3]);
    expect(Array.from(output.data as ArrayLike<unknown>)).toEqual(Array.from(tensor.data as ArrayLike<unknown>));
  });

  it("accepts another batch size and length for the same model", async () => {
    const tensor = new ort.Tensor("float32", Float32Array.from({ length: 7 * 5 }, (_, i) => i), [7, 5]);
    const output = outputOf(await runModel("identity_fp32", { INPUT0: tensor }), "OUTPUT0");
    expect(output.dims).toEqual([7, 5]);
    expect(Array.from(output.data as Float32Array)).toEqual(Array.from(tensor.data as Float32Array));
  });
});

describe("resnet50", () => {
  it("maps two different images [2,3,224,224] to two different finite, non-constant rows of 1000 logits", async () => {
    const pixelsPerImage = 3 * 224 * 224;
    const images = Float32Array.from({ length: 2 * pixelsPerImage }, (_, i) =>
      i < pixelsPerImage ? Math.sin(i * 0.001) : Math.cos(i * 0.0007) * 2);
    const output = outputOf(await runModel("resnet50", { input: new ort.Tensor("float32", images, [2, 3, 224, 224]) }), "output");
    expect(output.dims).toEqual([2, 1000]);
    const logits = Array.from(output.data as Float32Array);
    expect(logits.every(Number.isFinite)).toBe(true);
    const [first, second] = [logits.slice(0, 1000), logits.slice(1000)];
    for (const row of [first, second]) {
      expect(Math.max(...row) - Math.min(...row)).toBeGreaterThan(0.1);
    }
    const largestRowDifference = Math.max(...first.map((value, i) => Math.abs(value - (second[i] ?? value))));
    expect(largestRowDifference).toBeGreaterThan(1e-3);
  });
});

describe("mlp", () => {
  function initializer(model: Uint8Array, name: string): Float32Array {
    const { ModelProto } = loadOnnxSchema();
    const decoded = ModelProto.toObject(ModelProto.decode(model)) as {
      graph: { initializer: { name: string; raw_data: Uint8Array }[] };
    };
    const tensor = decoded.graph.initializer.find((candidate) => candidate.name === name);
    if (tensor === undefined) throw new Error(`no initializer ${name}`);
    const bytes = Uint8Array.from(tensor.raw_data);
    return new Float32Array(bytes.buffer);
  }

  it("computes relu(x W1 + b1) W2 + b2 for a batch of 5 rows", async () => {
    const { input: I, hidden: H, output: O } = MLP_FEATURES;
    const batchSize = 5;
    const x = Float32Array.from({ length: batchSize * I }, (_, i) => Math.sin(i));
    const output = outputOf(await runModel("mlp", { INPUT0: new ort.Tensor("float32", x, [batchSize, I]) }), "OUTPUT0");
    expect(output.dims).toEqual([batchSize, O]);

    const model = fs.readFileSync(modelPath("mlp"));
    const [w1, b1, w2, b2] = ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"].map((name) => initializer(model, name)) as [
      Float32Array, Float32Array, Float32Array, Float32Array,
    ];
    const expected: number[] = [];
    for (let row = 0; row < batchSize; row++) {
      const hidden = Array.from({ length: H }, (_, h) => {
        let sum = b1[h] ?? 0;
        for (let k = 0; k < I; k++) sum += (x[row * I + k] ?? 0) * (w1[k * H + h] ?? 0);
        return Math.max(0, sum);
      });
      for (let o = 0; o < O; o++) {
        let sum = b2[o] ?? 0;
        for (let h = 0; h < H; h++) sum += (hidden[h] ?? 0) * (w2[h * O + o] ?? 0);
        expected.push(sum);
      }
    }
    const actual = Array.from(output.data as Float32Array);
    actual.forEach((value, i) => expect(value).toBeCloseTo(expected[i] ?? Number.NaN, 4));
    expect(new Set(actual.map((value) => value.toFixed(4))).size).toBeGreaterThan(batchSize);
  });
});

describe("image_classifier pipeline", () => {
  const original = path.join(SHARED_DATA, "models", "squeezenet1.1_fp16", "SqueezeNet_fp16.onnx");
  const image = (seed: number): Uint16Array => Uint16Array.from({ length: 3 * 224 * 224 }, (_, i) => 0x5000 + ((i * seed) % 0x0fff));

  async function probabilities(file: string, images: Uint16Array[]): Promise<Uint16Array> {
    const session = await ort.InferenceSession.create(file, { executionProviders: ["cpu"] });
    try {
      const data = new Uint16Array(images.length * images[0]!.length);
      images.forEach((pixels, i) => data.set(pixels, i * pixels.length));
      const results = await session.run({ data_0: new ort.Tensor("float16", data, [images.length, 3, 224, 224]) });
      return outputOf(results, "softmaxout_1").data as Uint16Array;
    } finally {
      await session.release();
    }
  }

  it("copies the real SqueezeNet with a variable batch dimension: the same bits at batch 1, each row its image's at batch 2", async () => {
    const copy = path.join(repositoryDir, "squeezenet", "1", "model.onnx");
    const [a, b] = [image(7), image(13)];
    const expectedA = await probabilities(original, [a]);
    expect(await probabilities(copy, [a])).toEqual(expectedA);
    const batch = await probabilities(copy, [a, b]);
    expect(batch.subarray(0, 1000)).toEqual(expectedA);
    expect(batch.subarray(1000)).toEqual(await probabilities(original, [b]));
  });

  it("compiles the TypeScript steps to model.js and wires them into the ensemble", () => {
    const read = (file: string) => fs.readFileSync(path.join(repositoryDir, file), "utf8");
    expect(read("image_preprocess/1/model.js")).toMatch(/^\/\/ Compiled from image-preprocess\.ts .*\n"use strict";[\s\S]*exports\.default = ImagePreprocess;/);
    expect(read("image_postprocess/1/model.js")).toContain("exports.default = ImagePostprocess;");
    expect(read("image_preprocess/config.pbtxt")).toContain('backend: "typescript"');
    expect(read("image_postprocess/config.pbtxt")).toContain('key: "label_filename"\n  value: { string_value: "labels.txt" }');
    expect(read("image_postprocess/labels.txt")).toBe(fs.readFileSync(path.join(SHARED_DATA, "labels", "densenet_labels.txt"), "utf8"));
    expect(read("image_classifier/config.pbtxt")).toContain('platform: "ensemble"');
    expect(read("image_classifier/config.pbtxt")).toContain('model_name: "squeezenet"\n      model_version: -1\n      input_map { key: "data_0" value: "image_tensor" }');
  });
});

describe("building", () => {
  it("gives byte-identical files for the same seed, replacing an existing directory without leftovers", async () => {
    const secondDir = path.join(workDir, "second");
    fs.mkdirSync(secondDir);
    fs.writeFileSync(path.join(secondDir, "stale.txt"), "from an older build");
    await buildExampleRepository(secondDir, { seed: SEED });
    expect(fileHashes(secondDir)).toEqual(fileHashes(repositoryDir));
    expect(fs.readdirSync(workDir).sort()).toEqual(["models", "second"]);
    fs.rmSync(secondDir, { recursive: true });
  });

  it("draws different weights for a different seed", async () => {
    const otherSeedDir = path.join(workDir, "other-seed");
    await buildExampleRepository(otherSeedDir, { seed: SEED + 1 });
    const [expected, other] = [fileHashes(repositoryDir), fileHashes(otherSeedDir)];
    expect(other.get("simple/1/model.onnx")).toBe(expected.get("simple/1/model.onnx"));
    expect(other.get("resnet50/1/model.onnx")).not.toBe(expected.get("resnet50/1/model.onnx"));
    expect(other.get("mlp/1/model.onnx")).not.toBe(expected.get("mlp/1/model.onnx"));
    fs.rmSync(otherSeedDir, { recursive: true });
  });

  it("ensureExampleRepository builds a missing repository, keeps a current one, and rebuilds one its builder or data outdate", async () => {
    const ensuredDir = path.join(workDir, "ensured");
    const nowhere = path.join(workDir, "nowhere");
    const lines: string[] = [];
    expect(await ensureExampleRepository(ensuredDir, { seed: SEED, sharedDataDir: nowhere, log: (line) => lines.push(line) })).toBe("built");
    expect(fs.existsSync(path.join(ensuredDir, "resnet50", "1", "model.onnx"))).toBe(true);
    // Without the shared data the pipeline is left out, and the builder says so.
    expect(fs.readdirSync(ensuredDir).filter((name) => IMAGE_CLASSIFIER_MODELS.includes(name))).toEqual([]);
    expect(lines).toEqual([`example repository: leaving out image_classifier and its steps: no SqueezeNet 1.1 FP16 and labels under ${nowhere}`]);
    fs.writeFileSync(path.join(ensuredDir, "marker"), "kept");
    expect(await ensureExampleRepository(ensuredDir, { seed: SEED, sharedDataDir: nowhere, log: () => undefined })).toBe("present");
    expect(fs.readFileSync(path.join(ensuredDir, "marker"), "utf8")).toBe("kept");
    // Once the shared data is there, the stamp no longer matches: rebuilt, now with the pipeline.
    expect(await ensureExampleRepository(ensuredDir, { seed: SEED })).toBe("rebuilt");
    expect(fs.existsSync(path.join(ensuredDir, "marker"))).toBe(false);
    expect(fs.existsSync(path.join(ensuredDir, "image_classifier", "config.pbtxt"))).toBe(true);
    fs.rmSync(path.join(ensuredDir, STAMP_FILE_NAME)); // as builds were before they were stamped
    expect(await ensureExampleRepository(ensuredDir, { seed: SEED })).toBe("rebuilt");
    fs.rmSync(ensuredDir, { recursive: true });
  });

  it("ensureExampleRepository leaves a directory that is not an example build alone", async () => {
    const ownDir = path.join(workDir, "own");
    fs.mkdirSync(path.join(ownDir, "my_model"), { recursive: true });
    expect(await ensureExampleRepository(ownDir, { seed: SEED })).toBe("present");
    expect(fs.readdirSync(ownDir)).toEqual(["my_model"]);
    fs.rmSync(ownDir, { recursive: true });
  });
});

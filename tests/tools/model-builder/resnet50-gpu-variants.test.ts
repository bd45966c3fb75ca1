import * as ort from "onnxruntime-node";
import { beforeAll, describe, expect, it } from "vitest";
import { parseModelConfigText } from "../../../server/core/model-config/parse";
import { fromFloat16Array, toFloat16Array } from "../../../protocol/float16";
import type { ExampleModel } from "../../../tools/model-builder/example-model";
import { buildGpuResnet50Models } from "../../../tools/model-builder/models/resnet50-model";

const SEED = 7;

function fileOf(model: ExampleModel, relativePath: string): Uint8Array | string {
  const file = model.files.find((f) => f.relativePath === relativePath);
  if (file === undefined) throw new Error(`${model.name} has no ${relativePath}`);
  return file.contents;
}

async function run(model: ExampleModel, input: ort.Tensor): Promise<ort.Tensor> {
  const session = await ort.InferenceSession.create(fileOf(model, "1/model.onnx") as Uint8Array, { intraOpNumThreads: 2 });
  try {
    return (await session.run({ input })).output!;
  } finally {
    await session.release();
  }
}

const argmax = (values: ArrayLike<number>): number => {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
};

describe("resnet50 GPU variants (model builder --gpu)", () => {
  const models = new Map<string, ExampleModel>();
  beforeAll(() => {
    for (const model of buildGpuResnet50Models(SEED)) models.set(model.name, model);
  });

  it("configures FP32 batched and unbatched and FP16 for one KIND_GPU instance, batch up to 32", () => {
    const configs = new Map([...models.values()].map((m) => [m.name, parseModelConfigText(fileOf(m, "config.pbtxt") as string, m.name)]));
    expect([...configs.keys()]).toEqual(["resnet50_gpu", "resnet50_gpu_unbatched", "resnet50_fp16_gpu"]);
    for (const config of configs.values()) {
      expect(config.max_batch_size).toBe(32);
      expect(config.instance_group.map((g) => [g.kind, g.count])).toEqual([["KIND_GPU", 1]]);
    }
    expect(configs.get("resnet50_gpu")?.dynamic_batching).toBeDefined();
    expect(configs.get("resnet50_gpu_unbatched")?.dynamic_batching).toBeUndefined();
    expect(configs.get("resnet50_fp16_gpu")?.input.map((t) => t.data_type)).toEqual(["TYPE_FP16"]);
    expect(configs.get("resnet50_fp16_gpu")?.output.map((t) => t.data_type)).toEqual(["TYPE_FP16"]);
  });

  it("gives FP16 the FP32 weights rounded to halves: the same logits within FP16's error, the same top-1", async () => {
    const fp32 = models.get("resnet50_gpu")!;
    const fp16 = models.get("resnet50_fp16_gpu")!;
    expect((fileOf(fp16, "1/model.onnx") as Uint8Array).byteLength).toBeLessThan(0.51 * (fileOf(fp32, "1/model.onnx") as Uint8Array).byteLength);
    const image = Float32Array.from({ length: 3 * 224 * 224 }, (_, i) => Math.sin(i / 7) * 0.5);
    const expected = (await run(fp32, new ort.Tensor("float32", image, [1, 3, 224, 224]))).data as Float32Array;
    const halves = await run(fp16, new ort.Tensor("float16", toFloat16Array(image), [1, 3, 224, 224]));
    expect(halves.type).toBe("float16");
    const actual = fromFloat16Array(halves.data as Uint16Array);
    const range = Math.max(...expected) - Math.min(...expected);
    const worst = Math.max(...Array.from(expected, (value, i) => Math.abs(value - actual[i]!)));
    expect(worst / range).toBeLessThan(0.01);
    expect(argmax(actual)).toBe(argmax(expected));
  });
});

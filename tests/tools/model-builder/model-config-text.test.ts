import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseModelConfigText } from "../../../server/core/model-config/parse";
import { renderModelConfigText } from "../../../tools/model-builder/model-config-text";

const TRITON_CONFIGS_DIR = path.resolve(__dirname, "../../../../shared/data/triton-configs");

function withoutComments(configText: string): string {
  return configText.split("\n").filter((line) => !line.startsWith("#")).join("\n").trim();
}

describe("renderModelConfigText", () => {
  it("writes Triton's `simple` config exactly as Triton's example repository has it", () => {
    const int32 = (name: string) => ({ name, dataType: "TYPE_INT32", dims: [16] }) as const;
    const rendered = renderModelConfigText({
      name: "simple",
      runtime: { platform: "onnxruntime_onnx" },
      maxBatchSize: 8,
      inputs: [int32("INPUT0"), int32("INPUT1")],
      outputs: [int32("OUTPUT0"), int32("OUTPUT1")],
    });
    const triton = fs.readFileSync(path.join(TRITON_CONFIGS_DIR, "simple/config.pbtxt"), "utf8");
    expect(rendered.trim()).toBe(withoutComments(triton));
  });

  it("writes backend, format, labels, dynamic batching and instance groups", () => {
    const rendered = renderModelConfigText({
      name: "m",
      runtime: { backend: "identity" },
      maxBatchSize: 4,
      inputs: [{ name: "in", dataType: "TYPE_FP32", format: "FORMAT_NCHW", dims: [3, -1] }],
      outputs: [{ name: "out", dataType: "TYPE_STRING", dims: [2], labelFilename: "l\"abels.txt" }],
      dynamicBatching: { maxQueueDelayUs: 250 },
      instanceGroups: [{ count: 2, kind: "KIND_CPU" }, { count: 1, kind: "KIND_GPU" }],
    });
    expect(rendered).toContain('backend: "identity"\nmax_batch_size: 4\n');
    expect(rendered).toContain("    format: FORMAT_NCHW\n    dims: [ 3, -1 ]\n");
    expect(rendered).toContain('    label_filename: "l\\"abels.txt"\n');
    expect(rendered).toContain("dynamic_batching {\n  max_queue_delay_microseconds: 250\n}\n");
    expect(rendered).toMatch(/instance_group \[\n {2}\{\n {4}count: 2\n {4}kind: KIND_CPU\n {2}\},\n {2}\{\n {4}count: 1\n {4}kind: KIND_GPU\n {2}\}\n\]\n$/);
  });

  it("writes an empty dynamic_batching block for Triton's default batcher settings", () => {
    const rendered = renderModelConfigText({
      name: "m", runtime: { platform: "onnxruntime_onnx" }, maxBatchSize: 8, inputs: [], outputs: [], dynamicBatching: {},
    });
    expect(rendered).toContain("\ndynamic_batching { }\n");
    expect(rendered).not.toContain("instance_group");
  });

  it("writes parameters and ensemble steps that Triton's config parser reads back", () => {
    const rendered = renderModelConfigText({
      name: "pipeline", runtime: { platform: "ensemble" }, maxBatchSize: 8,
      inputs: [{ name: "IMAGE", dataType: "TYPE_STRING", dims: [1] }], outputs: [{ name: "CLASSES", dataType: "TYPE_STRING", dims: [-1] }],
      parameters: { label_filename: "labels.txt", "odd \"key\"": "x" },
      ensembleSteps: [
        { modelName: "pre", inputMap: { IMAGE: "IMAGE" }, outputMap: { TENSOR: "tensor" } },
        { modelName: "net", modelVersion: 2, inputMap: { x: "tensor" }, outputMap: { y: "CLASSES" } },
      ],
    });
    const config = parseModelConfigText(rendered, "pipeline");
    expect(config.parameters).toEqual({ label_filename: { string_value: "labels.txt" }, 'odd "key"': { string_value: "x" } });
    expect(config.ensemble_scheduling?.step.map((step) => ({ ...step }))).toEqual([
      expect.objectContaining({ model_name: "pre", model_version: -1, input_map: { IMAGE: "IMAGE" }, output_map: { TENSOR: "tensor" } }),
      expect.objectContaining({ model_name: "net", model_version: 2, input_map: { x: "tensor" }, output_map: { y: "CLASSES" } }),
    ]);
  });
});

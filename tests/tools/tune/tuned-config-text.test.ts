import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseModelConfigText } from "../../../server/core/model-config/parse";
import { tunedConfigText, TUNE_COMMENT } from "../../../tools/tune/tuned-config-text";
import type { TunedSettings } from "../../../tools/tune/tuned-settings";
import { SHARED_DATA } from "../../helpers/server-process";

const MLP_CONFIG = `name: "mlp"
platform: "onnxruntime_onnx"
max_batch_size: 64
input [
  {
    name: "INPUT0"
    data_type: TYPE_FP32
    dims: [ 1024 ]
  }
]
output [
  {
    name: "OUTPUT0"
    data_type: TYPE_FP32
    dims: [ 1024 ]
  }
]
dynamic_batching {
  max_queue_delay_microseconds: 500
}
instance_group [
  {
    count: 1
    kind: KIND_CPU
  }
]
`;

const MLP_START: TunedSettings = {
  device: { kind: "KIND_CPU" }, instanceCount: 1, intraOpThreads: 2, maxBatchSize: 64,
  dynamicBatching: { maxQueueDelayUs: 500, preferredBatchSizes: [] },
};

const context = (start: TunedSettings) => ({ start, cores: 2, modelName: "m" });

/** The text with comment lines removed: what the edit must leave alone is everything else. */
function withoutComments(text: string): string {
  return text.split("\n").filter((line) => !line.trimStart().startsWith("#")).join("\n");
}

describe("tunedConfigText", () => {
  it("changes only the tuned values in place, says what each was, and keeps the rest byte for byte", () => {
    const tuned: TunedSettings = { ...MLP_START, instanceCount: 2, intraOpThreads: 1, maxBatchSize: 16, dynamicBatching: { maxQueueDelayUs: 0, preferredBatchSizes: [8] } };
    const { text, changes } = tunedConfigText(MLP_CONFIG, tuned, context(MLP_START), ["measured: 123 infer/s"]);
    expect(text.startsWith(`${TUNE_COMMENT} measured: 123 infer/s\nname: "mlp"\n`)).toBe(true);
    expect(text).toContain(`${TUNE_COMMENT} max_batch_size 64 -> 16\nmax_batch_size: 16\n`);
    expect(text).toContain(`${TUNE_COMMENT} max_queue_delay_microseconds 500 -> 0\n${TUNE_COMMENT} preferred_batch_size none -> 8\ndynamic_batching {\n  preferred_batch_size: [ 8 ]\n  max_queue_delay_microseconds: 0\n}`);
    expect(text).toContain(`${TUNE_COMMENT} instance_group count 1 -> 2\ninstance_group [\n  {\n    count: 2\n    kind: KIND_CPU\n  }\n]`);
    // 2 instances on 2 cores: the server's default is 1 thread each, so no parameter is written.
    expect(text).not.toContain("intra_op_thread_count");
    expect(changes.map((c) => c.field)).toEqual(["max_batch_size", "instance_group count", "max_queue_delay_microseconds", "preferred_batch_size"]);
    const config = parseModelConfigText(text, "tuned");
    expect(config.max_batch_size).toBe(16);
    expect(config.instance_group[0]).toMatchObject({ count: 2, kind: "KIND_CPU" });
    expect(config.dynamic_batching).toMatchObject({ max_queue_delay_microseconds: 0, preferred_batch_size: [8] });
    expect(config.input[0]).toMatchObject({ name: "INPUT0", dims: [1024] });
    const untouched = (t: string): string => withoutComments(t).replace(/\d+/g, "N").replace(/\n\s*preferred_batch_size: \[ N \]/, "");
    expect(untouched(text)).toBe(untouched(MLP_CONFIG));
  });

  it("returns the text unchanged but for the header when nothing differs, and drops an earlier run's comments", () => {
    const once = tunedConfigText(MLP_CONFIG, MLP_START, context(MLP_START), ["first run"]);
    expect(once.changes).toEqual([]);
    expect(once.text).toBe(`${TUNE_COMMENT} first run\n${MLP_CONFIG}`);
    const tuned = { ...MLP_START, maxBatchSize: 32 };
    const first = tunedConfigText(MLP_CONFIG, tuned, context(MLP_START), ["first run"]).text;
    const second = tunedConfigText(first, tuned, context({ ...MLP_START, maxBatchSize: 32 }), ["second run"]).text;
    expect(second).toBe(`${TUNE_COMMENT} second run\n${MLP_CONFIG.replace("max_batch_size: 64", "max_batch_size: 32")}`);
  });

  it("adds what Triton's example config lacks (batcher, instance group, threads) after its license text", () => {
    const original = readFileSync(path.join(SHARED_DATA, "triton-configs", "simple", "config.pbtxt"), "utf8");
    const start: TunedSettings = { device: { kind: "KIND_CPU" }, instanceCount: 2, intraOpThreads: 1, maxBatchSize: 8, dynamicBatching: undefined };
    const tuned: TunedSettings = { ...start, instanceCount: 1, intraOpThreads: 1, dynamicBatching: { maxQueueDelayUs: 100, preferredBatchSizes: [] } };
    const { text, changes } = tunedConfigText(original, tuned, context(start), ["h"]);
    expect(text.startsWith(`${TUNE_COMMENT} h\n${original}`)).toBe(true);
    expect(text.slice(`${TUNE_COMMENT} h\n`.length + original.length)).toBe([
      `${TUNE_COMMENT} instance_group 2 x KIND_CPU (server default) -> 1 x KIND_CPU`,
      "instance_group [\n  {\n    count: 1\n    kind: KIND_CPU\n  }\n]",
      `${TUNE_COMMENT} intra_op_thread_count 1 (server default) -> 1`,
      'parameters {\n  key: "intra_op_thread_count"\n  value { string_value: "1" }\n}',
      `${TUNE_COMMENT} dynamic_batching off -> max_queue_delay_microseconds 100`,
      "dynamic_batching {\n  max_queue_delay_microseconds: 100\n}",
      "",
    ].join("\n"));
    expect(changes.map((c) => c.field)).toEqual(["instance_group", "intra_op_thread_count", "dynamic_batching"]);
    const config = parseModelConfigText(text, "tuned");
    expect(config.parameters["intra_op_thread_count"]).toEqual({ string_value: "1" });
    expect(config.input.map((input) => input.name)).toEqual(["INPUT0", "INPUT1"]);
  });

  it("edits an existing threads parameter and inline blocks where they are", () => {
    const original = 'name: "m"\nmax_batch_size: 4\ndynamic_batching { }\ninstance_group [ { kind: KIND_CPU } ]\nparameters { key: "intra_op_thread_count" value: { string_value: "2" } }\n';
    const start: TunedSettings = { device: { kind: "KIND_CPU" }, instanceCount: 2, intraOpThreads: 2, maxBatchSize: 4, dynamicBatching: { maxQueueDelayUs: 0, preferredBatchSizes: [] } };
    const tuned: TunedSettings = { ...start, instanceCount: 4, intraOpThreads: 1, dynamicBatching: { maxQueueDelayUs: 250, preferredBatchSizes: [] } };
    const { text } = tunedConfigText(original, tuned, { start, cores: 8, modelName: "m" }, []);
    expect(withoutComments(text)).toBe('name: "m"\nmax_batch_size: 4\ndynamic_batching { max_queue_delay_microseconds: 250 }\ninstance_group [ { count: 4 kind: KIND_CPU } ]\nparameters { key: "intra_op_thread_count" value: { string_value: "1" } }\n');
  });

  it("writes a GPU candidate's kind and accelerator, keeping a config's other optimization settings", () => {
    const original = 'name: "m"\nmax_batch_size: 8\ninstance_group [ { count: 1 kind: KIND_CPU } ]\noptimization {\n  graph { level: 1 }\n}\n';
    const start: TunedSettings = { device: { kind: "KIND_CPU" }, instanceCount: 1, intraOpThreads: 4, maxBatchSize: 8, dynamicBatching: undefined };
    const tuned: TunedSettings = { ...start, device: { kind: "KIND_GPU", accelerator: "tensorrt" }, instanceCount: 2, intraOpThreads: undefined };
    const { text, changes } = tunedConfigText(original, tuned, context(start), []);
    expect(changes).toEqual([
      { field: "instance_group count", from: "1", to: "2" },
      { field: "instance_group kind", from: "KIND_CPU", to: "KIND_GPU" },
      { field: "gpu_execution_accelerator", from: "none", to: "tensorrt" },
    ]);
    const config = parseModelConfigText(text, "tuned");
    expect(config.instance_group[0]).toMatchObject({ count: 2, kind: "KIND_GPU" });
    expect(config.optimization?.graph?.level).toBe(1);
    expect(config.optimization?.execution_accelerators?.gpu_execution_accelerator.map((a) => a.name)).toEqual(["tensorrt"]);
    const switched = tunedConfigText(text, { ...tuned, device: { kind: "KIND_GPU", accelerator: "webgpu" } }, context(tuned), []).text;
    expect(parseModelConfigText(switched, "tuned").optimization?.execution_accelerators?.gpu_execution_accelerator.map((a) => a.name)).toEqual(["webgpu"]);
  });
});

import { describe, expect, it } from "vitest";
import { withTritonDefaults } from "../../../../server/core/model-config/normalize";
import { parseModelConfigText } from "../../../../server/core/model-config/parse";

const IO = `input [ { name: "IN" data_type: TYPE_FP32 dims: [ 4 ] } ]\noutput [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ]`;
const normalized = (text: string): ReturnType<typeof withTritonDefaults> =>
  withTritonDefaults(parseModelConfigText(`name: "m"\n${IO}\n${text}`, "model 'm':"), "model.onnx");

// Triton core src/model_config_utils.cc, NormalizeModelConfig: "If preferred batch size is not specified set it to
// max-batch-size"; qa/L0_model_config/autofill_noplatform_success/onnx/no_config/expected shows `preferred_batch_size: 4`.
describe("withTritonDefaults: preferred batch sizes as Triton's NormalizeModelConfig fills them", () => {
  it("fills an empty dynamic_batching with [max_batch_size] (autofill_noplatform_success/onnx/no_config)", () => {
    expect(normalized("max_batch_size: 4\ndynamic_batching { }").dynamic_batching?.preferred_batch_size).toEqual([4]);
  });

  it("keeps the sizes a config gives, and fills none for a model that does not batch", () => {
    expect(normalized("max_batch_size: 8\ndynamic_batching { preferred_batch_size: [ 2, 6 ] }").dynamic_batching?.preferred_batch_size).toEqual([2, 6]);
    expect(normalized("max_batch_size: 0\ndynamic_batching { }").dynamic_batching?.preferred_batch_size).toEqual([]);
  });

  it("fills the oldest-first sequence batcher's sizes the same way, beside the idle default", () => {
    const sequence = normalized("max_batch_size: 2\nsequence_batching { oldest { max_candidate_sequences: 4 } }").sequence_batching;
    expect(sequence).toMatchObject({ max_sequence_idle_microseconds: 1_000_000, oldest: { max_candidate_sequences: 4, preferred_batch_size: [2] } });
  });
});

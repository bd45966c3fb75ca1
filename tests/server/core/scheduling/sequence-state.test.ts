import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseModelConfigText } from "../../../../server/core/model-config/parse";
import { stateSpecsOf } from "../../../../server/core/scheduling/sequence-state";

const modelDir = mkdtempSync(path.join(os.tmpdir(), "state-model-"));
mkdirSync(path.join(modelDir, "initial_state"));
writeFileSync(path.join(modelDir, "initial_state", "two.bin"), Buffer.from(new Float32Array([1.5, -2]).buffer));
afterAll(() => rmSync(modelDir, { recursive: true, force: true }));

const specs = (state: string, maxBatchSize = 4) => stateSpecsOf(
  parseModelConfigText(`name: "m"\nmax_batch_size: ${maxBatchSize}\nsequence_batching { state [ ${state} ] }`, "m"),
  (relative) => path.join(modelDir, relative),
);

describe("stateSpecsOf: Triton's implicit state at load (GenerateInitialStateData, SequenceStates::Initialize)", () => {
  it("starts a state without initial_state as zeros, variable dims as 1, with the batch dimension of 1", () => {
    const [spec] = specs(`{ input_name: "IN" output_name: "OUT" data_type: TYPE_FP32 dims: [ -1, 3 ] }`);
    expect(spec!.initial).toEqual({ name: "IN", datatype: "FP32", shape: [1, 1, 3], data: new Uint8Array(12) });
    expect(specs(`{ input_name: "IN" output_name: "OUT" data_type: TYPE_STRING dims: [ 2 ] }`, 0)[0]!.initial)
      .toEqual({ name: "IN", datatype: "BYTES", shape: [2], data: new Uint8Array(8) });
  });

  it("reads initial_state zero_data, or data_file from <model>/initial_state/", () => {
    const zero = specs(`{ input_name: "IN" output_name: "OUT" data_type: TYPE_INT32 dims: [ -1 ] initial_state [ { name: "z" data_type: TYPE_INT32 dims: [ 3 ] zero_data: true } ] }`);
    expect(zero[0]!.initial.shape).toEqual([1, 3]);
    const file = specs(`{ input_name: "IN" output_name: "OUT" data_type: TYPE_FP32 dims: [ 2 ] initial_state [ { name: "f" data_type: TYPE_FP32 dims: [ 2 ] data_file: "two.bin" } ] }`);
    expect([...new Float32Array(file[0]!.initial.data.slice().buffer)]).toEqual([1.5, -2]);
  });

  it.each([
    [`initial_state [ { name: "a" data_type: TYPE_INT32 dims: [ 1 ] zero_data: true }, { name: "b" data_type: TYPE_INT32 dims: [ 1 ] zero_data: true } ]`,
      "initial_state field for state input 'IN' must contain exactly one or zero element. Found '2' elements."],
    [`initial_state [ { name: "a" data_type: TYPE_FP32 dims: [ 1 ] zero_data: true } ]`, "The data type used for 'initial_state' field of state 'IN' does not match the state data type."],
    [`initial_state [ { data_type: TYPE_INT32 dims: [ 1 ] zero_data: true } ]`, "Field 'name' must be set when using initial_state for state input 'IN'."],
    [`initial_state [ { name: "a" data_type: TYPE_INT32 dims: [ 1, 1 ] zero_data: true } ]`, "Number of dimensions in 'initial_state' doesn't match the size of 'state' dimensions for state input 'IN'. 2 != 1"],
    [`initial_state [ { name: "a" data_type: TYPE_INT32 dims: [ 2 ] zero_data: true } ]`, "'initial_state' dim for input name 'IN' doesn't match 'state' dim description. 2 != 1"],
    [`initial_state [ { name: "a" data_type: TYPE_INT32 dims: [ 1 ] data_file: "two.bin" } ]`, undefined],
    [`initial_state [ { name: "a" data_type: TYPE_INT32 dims: [ 1 ] } ]`, "initial_state setting expects state'IN' to have state_data set"],
    [`use_growable_memory: true`, "In order to 'use_growable_memory', you must also enable 'use_single_buffer' for state input name 'IN'."],
  ])("refuses with Triton's message: %s", (extra, message) => {
    const load = () => specs(`{ input_name: "IN" output_name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] ${extra} }`);
    if (message === undefined) expect(load).not.toThrow();
    else expect(load).toThrow(message);
  });

  it("refuses a data_file shorter than the state, with Triton's message", () => {
    expect(() => specs(`{ input_name: "IN" output_name: "OUT" data_type: TYPE_FP32 dims: [ 3 ] initial_state [ { name: "f" data_type: TYPE_FP32 dims: [ 3 ] data_file: "two.bin" } ] }`))
      .toThrow("initial_state setting expects 12 bytes, but the data provided from two.binonly has 8 bytes.");
  });
});

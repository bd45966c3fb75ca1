import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseModelConfigText } from "../../../../server/core/model-config/parse";
import type { ModelSignature } from "../../../../server/core/model-config/model-signature";
import { buildWarmupSamples } from "../../../../server/core/repository/model-warmup";

const modelDirectory = mkdtempSync(path.join(os.tmpdir(), "warmup-unit-"));
mkdirSync(path.join(modelDirectory, "warmup"));
writeFileSync(path.join(modelDirectory, "warmup", "words.bin"), Buffer.from([2, 0, 0, 0, 0x68, 0x69, 0, 0, 0, 0]));
afterAll(() => rmSync(modelDirectory, { recursive: true, force: true }));

const tensor = (name: string, datatype: ModelSignature["inputs"][number]["datatype"], dims: number[]) =>
  ({ name, datatype, dims, reshape: undefined, optional: false, labels: undefined });

function signature(maxBatchSize: number, controls: ModelSignature["controls"] = []): ModelSignature {
  return {
    maxBatchSize,
    inputs: [tensor("WORDS", "BYTES", [2]), tensor("FLAGS", "BOOL", [64])],
    outputs: [tensor("OUT", "INT32", [1])],
    controls,
  };
}

function samples(warmup: string, sig = signature(4)) {
  return buildWarmupSamples("m", { name: "m", path: modelDirectory, symlinks: "inside" }, parseModelConfigText(`model_warmup [ ${warmup} ]`, "test").model_warmup, sig);
}

const words = (data: string): string => `{ key: "WORDS" value: { data_type: TYPE_STRING dims: [ 2 ] ${data} } }`;
const flags = (data: string): string => `{ key: "FLAGS" value: { data_type: TYPE_BOOL dims: [ 64 ] ${data} } }`;

describe("buildWarmupSamples", () => {
  it("repeats one batch element batch_size times: strings from a file, random booleans as 0/1", () => {
    const [sample] = samples(`{ name: "s" batch_size: 3 inputs [ ${words('input_data_file: "words.bin"')}, ${flags("random_data: true")} ] }`);
    expect(sample!.runs).toBe(1);
    expect(sample!.request.batchSize).toBe(3);
    const text = sample!.request.inputs.get("WORDS")!;
    expect(text.shape).toEqual([3, 2]);
    expect(Buffer.from(text.data).toString("hex")).toBe("02000000686900000000".repeat(3));
    const bools = sample!.request.inputs.get("FLAGS")!.data;
    expect(bools.byteLength).toBe(3 * 64);
    expect(bools.every((b) => b === 0 || b === 1)).toBe(true);
    expect(bools.some((b) => b === 1)).toBe(true);
  });

  it("makes zero strings empty (a zero length prefix each) and runs a sample `count` times", () => {
    const [sample] = samples(`{ name: "z" batch_size: 1 count: 4 inputs [ ${words("zero_data: true")}, ${flags("zero_data: true")} ] }`);
    expect(sample!.runs).toBe(4);
    expect([...sample!.request.inputs.get("WORDS")!.data]).toEqual(new Array(8).fill(0));
  });

  it.each([
    ["batch_size 0", `{ name: "b0" batch_size: 0 inputs [ ${words("zero_data: true")}, ${flags("zero_data: true")} ] }`, signature(4), "model_warmup sample 'b0': batch_size must be at least 1"],
    ["a batch_size over max_batch_size", `{ name: "b9" batch_size: 9 inputs [ ${words("zero_data: true")}, ${flags("zero_data: true")} ] }`, signature(4), "model_warmup sample 'b9': batch_size 9 exceeds the model's max_batch_size 4"],
    ["batch_size 2 for a model without batching", `{ name: "nb" batch_size: 2 inputs [ ${words("zero_data: true")}, ${flags("zero_data: true")} ] }`, signature(0), "model_warmup sample 'nb': batch_size must be 1 for a model that does not batch (max_batch_size 0)"],
    ["variable dims", `{ name: "var" batch_size: 1 inputs [ ${words("zero_data: true").replace("[ 2 ]", "[ -1 ]")}, ${flags("zero_data: true")} ] }`, signature(4), "model_warmup sample 'var': input 'WORDS' dims [-1] must all be concrete (no -1)"],
    ["a sequence model sample without its control inputs", `{ name: "seq" batch_size: 1 inputs [ ${words("zero_data: true")}, ${flags("zero_data: true")} ] }`, signature(4, [{ name: "START", datatype: "INT32" }]), "model_warmup sample 'seq': a sequence model's warmup must give its control input(s) 'START'"],
    ["a missing data file", `{ name: "odd" batch_size: 1 inputs [ ${words('input_data_file: "missing.bin"')}, ${flags("zero_data: true")} ] }`, signature(4), "model_warmup sample 'odd': cannot read input_data_file warmup/missing.bin: ENOENT"],
    ["dims the model does not take", `{ name: "wrong" batch_size: 1 inputs [ ${words("zero_data: true")}, ${flags("zero_data: true").replace("[ 64 ]", "[ 63 ]")} ] }`, signature(4), /^model_warmup sample 'wrong': unexpected shape for input 'FLAGS'/],
  ])("refuses %s", (_label, warmup, sig, message) => {
    expect(() => samples(warmup, sig)).toThrow(message);
  });

  it("feeds a sequence model's control inputs to the backend alongside the model inputs", () => {
    const sig = signature(4, [{ name: "START", datatype: "INT32" }]);
    const [sample] = samples(`{ name: "seq" batch_size: 2 inputs [ ${words("zero_data: true")}, ${flags("zero_data: true")}, { key: "START" value: { data_type: TYPE_INT32 dims: [ 1 ] zero_data: true } } ] }`, sig);
    expect(sample!.request.inputs.get("START")).toMatchObject({ shape: [2, 1], data: new Uint8Array(8) });
  });
});

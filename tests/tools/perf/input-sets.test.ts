import { describe, expect, it } from "vitest";
import type { TensorMetadata } from "../../../client/index";
import { buildInputSets, type InputSetOptions } from "../../../tools/perf/input-sets";
import { PerfError } from "../../../tools/perf/perf-error";

const simple: TensorMetadata[] = [{ name: "INPUT0", datatype: "INT32", shape: [-1, 16] }, { name: "INPUT1", datatype: "INT32", shape: [-1, 16] }];
const variable: TensorMetadata[] = [{ name: "X", datatype: "FP32", shape: [-1, -1, 3] }];
const options = (overrides: Partial<InputSetOptions>): InputSetOptions => ({
  batchSize: 1, maxBatchSize: 8, shapes: new Map(), source: { kind: "random", seed: 1 }, ...overrides,
});

describe("buildInputSets", () => {
  it("generates one set with the batch dimension, random integers in [0, 100) repeated per batch element", () => {
    const [set] = buildInputSets(simple, options({ batchSize: 2 }));
    expect(set!.map((input) => input.shape)).toEqual([[2, 16], [2, 16]]);
    const data = set![0]!.data as Int32Array;
    expect(data).toHaveLength(32);
    expect([...data.subarray(0, 16)]).toEqual([...data.subarray(16)]);
    expect(data.every((value) => value >= 0 && value < 100)).toBe(true);
  });

  it("is deterministic for a seed, and all zero for zero data", () => {
    expect(buildInputSets(simple, options({}))).toEqual(buildInputSets(simple, options({})));
    const [zero] = buildInputSets(simple, options({ source: { kind: "zero" } }));
    expect([...(zero![1]!.data as Int32Array)].every((value) => value === 0)).toBe(true);
  });

  it("leaves the batch dimension out for models that do not batch", () => {
    const [set] = buildInputSets([{ name: "A", datatype: "FP32", shape: [4] }], options({ maxBatchSize: 0 }));
    expect(set![0]!.shape).toEqual([4]);
  });

  it("needs --shape for variable dimensions, and checks it against the model", () => {
    expect(() => buildInputSets(variable, options({}))).toThrow(PerfError);
    expect(() => buildInputSets(variable, options({}))).toThrow("input 'X' has a variable dimension (shape [-1,3]); give it with --shape X:N,3");
    const [set] = buildInputSets(variable, options({ shapes: new Map([["X", [5, 3]]]) }));
    expect(set![0]!.shape).toEqual([1, 5, 3]);
    expect(() => buildInputSets(variable, options({ shapes: new Map([["X", [5, 4]]]) }))).toThrow("shape [5,4] for input 'X' does not fit the model's [-1,3]");
  });

  it("reads perf_analyzer data files: flat arrays, content with shape, base64, one set per entry", () => {
    const document = {
      data: [
        { X: { content: [[1, 2, 3], [4, 5, 6]], shape: [2, 3] } },
        { X: { b64: Buffer.from(new Float32Array([7, 8, 9]).buffer).toString("base64") } },
      ],
    };
    const sets = buildInputSets(variable, options({ source: { kind: "file", path: "d.json", document }, shapes: new Map([["X", [1, 3]]]) }));
    expect(sets).toHaveLength(2);
    expect(sets[0]![0]).toMatchObject({ shape: [1, 2, 3], data: new Float32Array([1, 2, 3, 4, 5, 6]) });
    expect(sets[1]![0]).toMatchObject({ shape: [1, 1, 3], data: new Float32Array([7, 8, 9]) });
  });

  it("says which entry and input of a data file is wrong", () => {
    const file = (document: unknown) => options({ source: { kind: "file", path: "d.json", document } });
    expect(() => buildInputSets(simple, file({ rows: [] }))).toThrow(/d.json: expected \{"data"/);
    expect(() => buildInputSets(simple, file({ data: [{ INPUT0: new Array(16).fill(1) }] }))).toThrow("d.json: entry 0 has no data for input 'INPUT1'");
    expect(() => buildInputSets(simple, file({ data: [{ INPUT0: [1, 2], INPUT1: [1, 2] }] }))).toThrow("d.json: input 'INPUT0' of entry 0 has 2 elements, its shape [16] needs 16");
    expect(() => buildInputSets(simple, file({ data: [{ INPUT0: ["a"], INPUT1: [1] }] }))).toThrow(/d.json: input 'INPUT0'.*is not a INT32 value/);
  });

  it("reads a directory in perf_analyzer's layout: a file per input, raw bytes, BYTES one element per line", () => {
    const files = new Map<string, Uint8Array>([
      ["X", new Uint8Array(Float32Array.from([1, 2, 3]).buffer)],
      ["TEXT", new TextEncoder().encode("first\nsecond\n")],
    ]);
    const inputs: TensorMetadata[] = [{ name: "X", datatype: "FP32", shape: [-1, -1, 3] }, { name: "TEXT", datatype: "BYTES", shape: [-1, 2] }];
    const sets = buildInputSets(inputs, options({ source: { kind: "directory", path: "dir", files }, shapes: new Map([["X", [1, 3]]]) }));
    expect(sets).toHaveLength(1);
    expect(sets[0]![0]).toMatchObject({ shape: [1, 1, 3], data: new Float32Array([1, 2, 3]) });
    expect(sets[0]![1]!.data).toEqual([new TextEncoder().encode("first"), new TextEncoder().encode("second")]);
  });

  it("makes every file of a directory one element of a model's only BYTES input (a folder of images)", () => {
    const images = new Map([["a.jpg", Uint8Array.of(0xff, 0xd8, 0xff)], ["b.png", Uint8Array.of(0x89, 0x50)]]);
    const image: TensorMetadata[] = [{ name: "IMAGE", datatype: "BYTES", shape: [-1, 1] }];
    const sets = buildInputSets(image, options({ batchSize: 2, source: { kind: "directory", path: "images", files: images } }));
    expect(sets.map((set) => set[0])).toEqual([
      { name: "IMAGE", datatype: "BYTES", shape: [2, 1], data: [images.get("a.jpg"), images.get("a.jpg")] },
      { name: "IMAGE", datatype: "BYTES", shape: [2, 1], data: [images.get("b.png"), images.get("b.png")] },
    ]);
    expect(() => buildInputSets(simple, options({ source: { kind: "directory", path: "images", files: images } })))
      .toThrow("images: expected a file named after each input (INPUT0, INPUT1), or, for a model with one BYTES input, one file per element");
  });

  it("takes a data file's base64 content as one BYTES element (an image in perf_analyzer's JSON)", () => {
    const jpeg = Uint8Array.of(0xff, 0xd8, 0xff, 0xe0, 0, 16);
    const document = { data: [{ IMAGE: { b64: Buffer.from(jpeg).toString("base64") } }] };
    const [set] = buildInputSets([{ name: "IMAGE", datatype: "BYTES", shape: [-1, 1] }], options({ source: { kind: "file", path: "d.json", document } }));
    expect(set![0]).toEqual({ name: "IMAGE", datatype: "BYTES", shape: [1, 1], data: [jpeg] });
  });
});

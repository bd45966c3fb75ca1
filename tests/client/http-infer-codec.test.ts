import { describe, expect, it } from "vitest";
import { decodeHttpInfer, encodeHttpInfer } from "../../client/http-infer-codec";
import type { InferRequest } from "../../client/infer-types";

const request = (overrides: Partial<InferRequest>): InferRequest => ({
  modelName: "m", modelVersion: undefined, id: undefined, parameters: {}, outputs: undefined, outputFormat: "binary",
  inputs: [{ name: "A", datatype: "INT32", shape: [1, 2], data: new Int32Array([7, 8]), format: "binary", parameters: {} }],
  ...overrides,
});

function split(body: Buffer, headerLength: string | undefined): { json: Record<string, unknown>; rest: Buffer } {
  const length = headerLength === undefined ? body.byteLength : Number(headerLength);
  return { json: JSON.parse(body.subarray(0, length).toString()) as Record<string, unknown>, rest: body.subarray(length) };
}

describe("encodeHttpInfer", () => {
  it("puts binary inputs after the JSON header and asks for binary outputs", () => {
    const encoded = encodeHttpInfer(request({ id: "r1" }));
    const { json, rest } = split(encoded.body, encoded.headers["inference-header-content-length"]);
    expect(json).toEqual({
      id: "r1", parameters: { binary_data_output: true },
      inputs: [{ name: "A", shape: [1, 2], datatype: "INT32", parameters: { binary_data_size: 8 } }],
    });
    expect([...rest]).toEqual([7, 0, 0, 0, 8, 0, 0, 0]);
    expect(encoded.headers["content-type"]).toBe("application/octet-stream");
  });

  it("writes JSON data for JSON inputs, per-output formats and classification, and no binary header", () => {
    const encoded = encodeHttpInfer(request({
      inputs: [{ name: "A", datatype: "INT64", shape: [2], data: new BigInt64Array([9007199254740993n, -1n]), format: "json", parameters: { p: 1 } }],
      outputs: [{ name: "X", format: "json", classification: 3 }, { name: "Y", format: "binary", classification: undefined }],
      outputFormat: "json",
    }));
    expect(encoded.headers["inference-header-content-length"]).toBeUndefined();
    const text = encoded.body.toString();
    expect(text).toContain('"data":[9007199254740993,-1]');
    expect(JSON.parse(text)).toMatchObject({
      inputs: [{ name: "A", parameters: { p: 1 } }],
      outputs: [{ name: "X", parameters: { binary_data: false, classification: 3 } }, { name: "Y", parameters: { binary_data: true } }],
    });
  });

  it("sends FP16 as binary even when JSON was asked for: KServe JSON has no half floats", () => {
    const encoded = encodeHttpInfer(request({ inputs: [{ name: "H", datatype: "FP16", shape: [1], data: new Uint16Array([0x3c00]), format: "json", parameters: {} }] }));
    const { json, rest } = split(encoded.body, encoded.headers["inference-header-content-length"]);
    expect(json["inputs"]).toEqual([{ name: "H", shape: [1], datatype: "FP16", parameters: { binary_data_size: 2 } }]);
    expect([...rest]).toEqual([0x00, 0x3c]);
  });

  it("refuses NaN in JSON rather than sending something else", () => {
    expect(() => encodeHttpInfer(request({ inputs: [{ name: "F", datatype: "FP32", shape: [1], data: new Float32Array([Number.NaN]), format: "json", parameters: {} }] })))
      .toThrow(/NaN, which JSON cannot carry/);
  });
});

describe("decodeHttpInfer", () => {
  it("reads JSON outputs and binary outputs in order, dropping the binary framing parameter", () => {
    const header = JSON.stringify({
      id: "r1", model_name: "m", model_version: "1",
      outputs: [
        { name: "J", datatype: "FP32", shape: [2], data: [1.5, null] },
        { name: "B", datatype: "INT16", shape: [2], parameters: { binary_data_size: 4 } },
        { name: "S", datatype: "BYTES", shape: [1], parameters: { binary_data_size: 6 } },
      ],
    });
    const body = Buffer.concat([Buffer.from(header), Buffer.from([1, 0, 0xff, 0xff]), Buffer.from([2, 0, 0, 0, 104, 105])]);
    const decoded = decodeHttpInfer(body, Buffer.byteLength(header));
    expect(decoded).toMatchObject({ id: "r1", modelName: "m", modelVersion: "1" });
    const [json, binary, bytes] = decoded.outputs;
    expect(json).toEqual({ name: "J", datatype: "FP32", shape: [2], data: new Float32Array([1.5, Number.NaN]) });
    expect(binary).toEqual({ name: "B", datatype: "INT16", shape: [2], data: new Int16Array([1, -1]) });
    expect(bytes!.data).toEqual([new Uint8Array([104, 105])]);
  });

  it("rejects a body shorter than its binary outputs claim", () => {
    const header = JSON.stringify({ model_name: "m", model_version: "1", outputs: [{ name: "B", datatype: "INT32", shape: [1], parameters: { binary_data_size: 4 } }] });
    expect(() => decodeHttpInfer(Buffer.from(header), Buffer.byteLength(header))).toThrow(/past the end of the body/);
  });
});

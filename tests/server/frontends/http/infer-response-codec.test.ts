import { describe, expect, it } from "vitest";
import type { InferResponse } from "../../../../server/core/index";
import { type EncodedInferResponse, encodeInferResponse } from "../../../../server/frontends/http/infer-response-codec";
import { JSON_SLICE_ELEMENTS } from "../../../../server/frontends/http/json-tensor-data";

const int32 = (values: number[]): Uint8Array => new Uint8Array(Int32Array.from(values).buffer);
const output = (name: string, values: number[]) => ({ name, datatype: "INT32" as const, shape: [1, values.length], data: int32(values) });
const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i - 3);
const json = { binaryOutputs: new Set<string>(), allBinary: false };

async function bodyOf(encoded: EncodedInferResponse): Promise<{ bytes: Buffer; chunks: number }> {
  if (encoded.body.kind === "buffer") return { bytes: encoded.body.bytes, chunks: 1 };
  const chunks: Buffer[] = [];
  for await (const chunk of encoded.body.stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return { bytes: Buffer.concat(chunks), chunks: chunks.length };
}

describe("encodeInferResponse", () => {
  it("writes a small response whole, in Triton's field order", async () => {
    const response: InferResponse = { modelName: "m", modelVersion: "1", id: "r1", outputs: [output("Y", [1, -2])] };
    const encoded = await encodeInferResponse(response, json);
    expect(encoded.body.kind).toBe("buffer");
    expect((await bodyOf(encoded)).bytes.toString()).toBe('{"id":"r1","model_name":"m","model_version":"1","outputs":[{"name":"Y","datatype":"INT32","shape":[1,2],"data":[1,-2]}]}');
  });

  it("streams a large JSON-only response in pieces, of unknown length, with the same text", async () => {
    const values = range(5 * JSON_SLICE_ELEMENTS);
    const encoded = await encodeInferResponse({ modelName: "m", modelVersion: "1", outputs: [output("Y", values), output("Z", [7])] }, json);
    expect(encoded.body).toMatchObject({ kind: "stream", byteLength: undefined });
    expect(encoded.headerLength).toBeUndefined();
    const { bytes, chunks } = await bodyOf(encoded);
    expect(chunks).toBeGreaterThan(3);
    expect(JSON.parse(bytes.toString())).toEqual({
      model_name: "m", model_version: "1",
      outputs: [{ name: "Y", datatype: "INT32", shape: [1, values.length], data: values }, { name: "Z", datatype: "INT32", shape: [1, 1], data: [7] }],
    });
  });

  it("lets other work run between the pieces of a large JSON response", async () => {
    const encoded = await encodeInferResponse({ modelName: "m", modelVersion: "1", outputs: [output("Y", range(8 * JSON_SLICE_ELEMENTS))] }, json);
    let chunksBeforeOtherWork: number | undefined;
    let chunks = 0;
    setImmediate(() => (chunksBeforeOtherWork = chunks));
    if (encoded.body.kind !== "stream") throw new Error("expected a stream");
    for await (const chunk of encoded.body.stream) chunks += chunk === undefined ? 0 : 1;
    expect(chunksBeforeOtherWork).toBeDefined();
    expect(chunksBeforeOtherWork!).toBeLessThan(chunks);
  });

  it("with binary outputs, formats the large JSON header first and streams the tensors after it, with the total length", async () => {
    const values = range(3 * JSON_SLICE_ELEMENTS);
    const binary = new Uint8Array(3 << 20).map((_, i) => i % 251);
    const response: InferResponse = {
      modelName: "m", modelVersion: "1",
      outputs: [output("Y", values), { name: "B", datatype: "UINT8", shape: [1, binary.length], data: binary }],
    };
    const encoded = await encodeInferResponse(response, { binaryOutputs: new Set(["B"]), allBinary: false });
    const { bytes, chunks } = await bodyOf(encoded);
    expect(encoded.body.kind === "stream" && encoded.body.byteLength).toBe(bytes.byteLength);
    expect(chunks).toBeGreaterThanOrEqual(4); // header, then the tensor in 1 MiB pieces
    const header = JSON.parse(bytes.subarray(0, encoded.headerLength).toString()) as { outputs: { data?: number[]; parameters?: Record<string, number> }[] };
    expect(header.outputs[0]!.data).toEqual(values);
    expect(header.outputs[1]!.parameters).toEqual({ binary_data_size: binary.length });
    expect(bytes.subarray(encoded.headerLength).equals(Buffer.from(binary))).toBe(true);
  });

  it("sends small binary responses whole", async () => {
    const encoded = await encodeInferResponse({ modelName: "m", modelVersion: "1", outputs: [output("Y", [5, 6])] }, { binaryOutputs: new Set(), allBinary: true });
    expect(encoded.body.kind).toBe("buffer");
    const { bytes } = await bodyOf(encoded);
    expect(bytes.subarray(encoded.headerLength).equals(Buffer.from(int32([5, 6])))).toBe(true);
  });

  it("refuses an output JSON cannot carry before anything is sent, however large", async () => {
    const fp16 = { name: "H", datatype: "FP16" as const, shape: [1, 4 * JSON_SLICE_ELEMENTS], data: new Uint8Array(8 * JSON_SLICE_ELEMENTS) };
    await expect(encodeInferResponse({ modelName: "m", modelVersion: "1", outputs: [fp16] }, json)).rejects.toThrow(/^sending FP16 data via JSON is not supported\. Please use the binary data format for output$/); // src/http_server.cc, WriteDataToJson
  });
});

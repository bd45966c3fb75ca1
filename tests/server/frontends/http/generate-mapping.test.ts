import { describe, expect, it } from "vitest";
import { InferenceError, type ModelMetadata } from "../../../../server/core/index";
import { generateRequest, generateResponseJson } from "../../../../server/frontends/http/generate-mapping";

const METADATA: ModelMetadata = {
  name: "m", versions: ["1"], platform: "typescript",
  inputs: [
    { name: "text_input", datatype: "BYTES", shape: [-1, 1] },
    { name: "grid", datatype: "INT32", shape: [-1, 2, -1] },
  ],
  outputs: [],
};

describe("Triton's generate request mapping", () => {
  it("makes input keys tensors, shaped as Triton does, and every other key a parameter", () => {
    const request = generateRequest({ text_input: "hi", grid: [1, 2, 3, 4, 5, 6], temperature: 0.5, parameters: { stream: false, top: "k" } }, METADATA, "1");
    expect(request.modelName).toBe("m");
    expect(request.modelVersion).toBe("1");
    expect(request.parameters).toEqual({ temperature: 0.5, stream: false, top: "k" });
    expect(request.inputs.map(({ name, datatype, shape }) => ({ name, datatype, shape }))).toEqual([
      { name: "text_input", datatype: "BYTES", shape: [1, 1] },
      { name: "grid", datatype: "INT32", shape: [1, 2, 3] },
    ]);
    expect([...new Int32Array(request.inputs[1]!.data.slice().buffer)]).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("refuses values its fixed dimensions cannot hold, and parameters that are neither strings, numbers nor booleans", () => {
    const error = (body: Record<string, unknown>): unknown => {
      try {
        generateRequest(body, METADATA, undefined);
      } catch (e) {
        return e instanceof InferenceError ? `${e.code}: ${e.message}` : e;
      }
      return undefined;
    };
    expect(error({ grid: [1, 2, 3] })).toBe("INVALID_ARG: The schema can not convert input 'grid' to tensor with proper shape");
    expect(error({ parameters: [1] })).toBe("INVALID_ARG: Expected JSON object for keyword: 'parameters'");
    expect(error({ nested: { a: 1 } })).toBe("INVALID_ARG: parameter 'nested' must be a string, a number or a boolean");
  });
});

describe("Triton's generate response mapping", () => {
  it("writes id, model and outputs by name in byte order, one element bare, BYTES as text", () => {
    const text = new Uint8Array([2, 0, 0, 0, 0x68, 0x69]);
    const json = generateResponseJson({
      modelName: "m", modelVersion: "1", id: "r1",
      outputs: [
        { name: "text_output", datatype: "BYTES", shape: [1], data: text },
        { name: "Scores", datatype: "FP32", shape: [2], data: new Uint8Array(new Float32Array([0.5, 1]).buffer) },
      ],
    });
    expect(json).toBe('{"Scores":[0.5,1.0],"id":"r1","model_name":"m","model_version":"1","text_output":"hi"}');
  });
});

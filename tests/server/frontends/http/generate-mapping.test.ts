import { describe, expect, it } from "vitest";
import { InferenceError, type TensorMetadata } from "../../../../server/core/index";
import { generateRequest, generateResponseJson } from "../../../../server/frontends/http/generate-mapping";

const INPUTS: TensorMetadata[] = [
  { name: "text_input", datatype: "BYTES", shape: [-1, 1] },
  { name: "grid", datatype: "INT32", shape: [-1, 2, -1] },
];
const METADATA = { name: "m", inputs: INPUTS };

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
    // src/http_server.cc, SetTritonParameterFromJsonParameter; qa/L0_http/generate_endpoint_test.py (test_complex_schema, test_parameters).
    expect(error({ nested: { a: 1 } })).toBe("INVALID_ARG: parameter 'nested' has invalid type. It should be either 'int', 'bool', or 'string'.");
    expect(error({ parameters: { nested: { twice: 1 } } }))
      .toBe("INVALID_ARG: Converting keyword: 'parameters': parameter 'nested' has invalid type. It should be either 'int', 'bool', or 'string'.");
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
    expect(json.toString()).toBe('{"Scores":[0.5,1.0],"id":"r1","model_name":"m","model_version":"1","text_output":"hi"}');
  });

  const bytesOutput = (...elements: readonly number[][]): Uint8Array =>
    Buffer.concat(elements.flatMap((element) => [Buffer.from(Uint32Array.of(element.length).buffer), Buffer.from(element)]));

  it("writes BYTES as the model's bytes, as Triton's rapidjson writer does: half a UTF-8 character stays half", () => {
    const json = generateResponseJson({ modelName: "m", modelVersion: "1", outputs: [{ name: "t", datatype: "BYTES", shape: [1], data: bytesOutput([0xc3]) }] });
    expect(json).toEqual(Buffer.concat([Buffer.from('{"model_name":"m","model_version":"1","t":"'), Buffer.of(0xc3), Buffer.from('"}')]));
    const escapedToo = generateResponseJson({ modelName: "m", modelVersion: "1", outputs: [{ name: "t", datatype: "BYTES", shape: [1], data: bytesOutput([0x22, 0xc3, 0x0a]) }] });
    expect(escapedToo).toEqual(Buffer.concat([Buffer.from('{"model_name":"m","model_version":"1","t":"\\"'), Buffer.of(0xc3), Buffer.from('\\n"}')]));
  });

  it("escapes quotes, backslashes and control characters as rapidjson does, and lists several elements", () => {
    const text = [0x22, 0x5c, 0x0a, 0x09, 0x08, 0x0c, 0x0d, 0x01, 0x1f, 0x7f, 0x2f, 0xe2, 0x82, 0xac];
    const json = generateResponseJson({ modelName: "m", modelVersion: "1", outputs: [{ name: "t", datatype: "BYTES", shape: [2], data: bytesOutput(text, []) }] });
    expect(typeof json).toBe("string"); // UTF-8 elements stay text
    expect(Buffer.from(json)).toEqual(Buffer.concat([
      Buffer.from('{"model_name":"m","model_version":"1","t":["\\"\\\\\\n\\t\\b\\f\\r\\u0001\\u001F'), Buffer.of(0x7f, 0x2f, 0xe2, 0x82, 0xac), Buffer.from('",""]}'),
    ]));
  });

  it("refuses outputs JSON cannot carry with INVALID_ARG (the route answers it as the response's error)", () => {
    const write = (output: Parameters<typeof generateResponseJson>[0]["outputs"][number]): unknown => {
      try {
        return generateResponseJson({ modelName: "m", modelVersion: "1", outputs: [output] }).toString();
      } catch (e) {
        return e instanceof InferenceError ? `${e.code}: ${e.message}` : e;
      }
    };
    expect(write({ name: "h", datatype: "FP16", shape: [1], data: new Uint8Array(2) })).toBe(
      "INVALID_ARG: sending FP16 data via JSON is not supported. Please use the binary data format for output",
    );
    expect(write({ name: "t", datatype: "BYTES", shape: [2], data: bytesOutput([0x61]) })).toBe("INVALID_ARG: input 't' holds 1 BYTES elements, but its shape needs 2");
  });
});

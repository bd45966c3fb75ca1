import { request as httpRequest } from "node:http";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../helpers/server-process";
import { withBinary } from "./http-transport";

/** A raw HTTP exchange that must be refused with Triton's `{"error": ...}` shape, whatever the transport table covers. */
interface HttpBadCase {
  readonly name: string;
  readonly method?: string;
  readonly path?: string;
  readonly body?: Buffer | string;
  readonly headers?: Record<string, string>;
  readonly status: number;
  readonly message: RegExp;
}

const MAX_INPUT = 64 * 1024;
const INFER = "/v2/models/simple/infer";
const validInput0 = { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) };
const validInput1 = { ...validInput0, name: "INPUT1" };
const json = (value: unknown): string => JSON.stringify(value);
const sixteenInts = Buffer.alloc(64);

const CASES: readonly HttpBadCase[] = [
  { name: "malformed JSON", body: "{\"inputs\": [", status: 400, message: /failed to parse the request JSON/ },
  { name: "body is a JSON array", body: "[]", status: 400, message: /must be a JSON object/ },
  { name: "no inputs field", body: json({ outputs: [] }), status: 400, message: /'inputs' array/ },
  { name: "inputs is not an array", body: json({ inputs: { name: "INPUT0" } }), status: 400, message: /'inputs' array/ },
  { name: "input without a name", body: json({ inputs: [{ datatype: "INT32", shape: [1, 16], data: [] }] }), status: 400, message: /non-empty string 'name'/ },
  { name: "unknown datatype string", body: json({ inputs: [{ ...validInput0, datatype: "FLOAT" }, validInput1] }), status: 400, message: /invalid datatype "FLOAT"/ },
  { name: "shape is not an array", body: json({ inputs: [{ ...validInput0, shape: "1x16" }, validInput1] }), status: 400, message: /'shape' array/ },
  { name: "negative dimension", body: json({ inputs: [{ ...validInput0, shape: [-1, 16] }, validInput1] }), status: 400, message: /^Unable to parse 'shape': attempt to access JSON non-unsigned-integer as unsigned-integer$/ }, // qa/L0_http/http_test.py test_negative_dimensions (Triton: 500, see docs/protocol.md)
  { name: "fractional dimension", body: json({ inputs: [{ ...validInput0, shape: [1.5, 16] }, validInput1] }), status: 400, message: /^Unable to parse 'shape': attempt to access JSON non-unsigned-integer as unsigned-integer$/ },
  { name: "string element for INT32", body: json({ inputs: [{ ...validInput0, data: ["a", ...validInput0.data.slice(1)] }, validInput1] }), status: 400, message: /expected INT32 elements, got "a"/ },
  { name: "INT32 element out of range", body: json({ inputs: [{ ...validInput0, data: [2 ** 31, ...validInput0.data.slice(1)] }, validInput1] }), status: 400, message: /expected INT32 elements, got 2147483648/ },
  { name: "float element for INT32", body: json({ inputs: [{ ...validInput0, data: [0.5, ...validInput0.data.slice(1)] }, validInput1] }), status: 400, message: /expected INT32 elements, got 0.5/ },
  { name: "FP16 data as JSON", path: "/v2/models/identity_fp16/infer", body: json({ inputs: [{ name: "INPUT0", datatype: "FP16", shape: [1, 1], data: [1] }] }), status: 400, message: /^receiving FP16 data via JSON is not supported\. Please use the binary data format for input INPUT0$/ }, // src/http_server.cc, ReadDataFromJson
  { name: "BF16 data as JSON", path: "/v2/models/identity_bf16/infer", body: json({ inputs: [{ name: "INPUT0", datatype: "BF16", shape: [1, 1], data: [1] }] }), status: 400, message: /^receiving BF16 data via JSON is not supported\. Please use the binary data format for input INPUT0$/ },
  { name: "both data and binary_data_size", ...withBinary({ inputs: [{ ...validInput0, parameters: { binary_data_size: 64 } }, validInput1] }, sixteenInts), status: 400, message: /both 'data' and binary_data_size/ },
  { name: "neither data nor binary_data_size", body: json({ inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 16] }, validInput1] }), status: 400, message: /neither 'data' nor a binary_data_size/ },
  { name: "truncated binary payload", ...withBinary({ inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 16], parameters: { binary_data_size: 64 } }, validInput1] }, Buffer.alloc(40)), status: 400, message: /unexpected end of binary data for input 'INPUT0'/ },
  { name: "binary bytes no input claims", ...withBinary({ inputs: [validInput0, validInput1] }, Buffer.alloc(8)), status: 400, message: /8 bytes of binary data were not claimed/ },
  { name: "binary_data_size that is not an integer", ...withBinary({ inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 16], parameters: { binary_data_size: "64" } }, validInput1] }, sixteenInts), status: 400, message: /invalid binary_data_size/ },
  { name: "header length beyond the body", body: json({ inputs: [validInput0, validInput1] }), headers: { "inference-header-content-length": "99999" }, status: 400, message: /larger than the body/ },
  { name: "header length not a number", body: json({ inputs: [validInput0, validInput1] }), headers: { "inference-header-content-length": "ten" }, status: 400, message: /must be a non-negative integer/ },
  { name: "raw binary body for a two-input model", body: sixteenInts, headers: { "inference-header-content-length": "0" }, status: 400, message: /^Raw request must only have 1 input \(found 1\) to be deduced but got 2 inputs in 'simple' model configuration$/ },
  { name: "raw binary body that does not fit the input", path: "/v2/models/identity_fp32/infer", body: Buffer.alloc(7), headers: { "inference-header-content-length": "0" }, status: 400, message: /does not fit input 'INPUT0'/ },
  // qa/L0_http/http_input_size_limit_test.py: src/http_server.cc's EVBufferToJson and raw-input checks.
  { name: "body over --http-max-input-size", body: json({ inputs: [validInput0, validInput1], pad: "x".repeat(MAX_INPUT) }), status: 400, message: /^request JSON size of \d+ bytes exceeds the maximum allowed input size of 65536 bytes\. Use --http-max-input-size to increase the limit\.$/ },
  { name: "raw binary body over --http-max-input-size", path: "/v2/models/identity_fp32/infer", body: Buffer.alloc(MAX_INPUT + 4), headers: { "inference-header-content-length": "0" }, status: 400, message: new RegExp(`^Raw input has a byte_size \\(${MAX_INPUT + 4} bytes\\) that exceeds the maximum allowed value of 65536 bytes\\. Use --http-max-input-size to increase the limit\\.$`) },
  { name: "gzip body that inflates past the limit", body: gzipSync(Buffer.from(json({ inputs: [], pad: "x".repeat(4 * MAX_INPUT) }))), headers: { "content-encoding": "gzip" }, status: 400, message: /^Decompressed data size exceeds the maximum allowed value of 65536 bytes\. Use --http-max-input-size to increase the limit\.$/ },
  { name: "corrupt gzip body", body: Buffer.from("not gzip at all"), headers: { "content-encoding": "gzip" }, status: 400, message: /failed to decompress the gzip request body/ },
  { name: "unsupported content encoding", body: json({ inputs: [] }), headers: { "content-encoding": "br" }, status: 501, message: /unsupported Content-Encoding 'br'/ },
  { name: "shared memory input", body: json({ inputs: [{ ...validInput0, parameters: { shared_memory_region: "r", shared_memory_byte_size: 64 } }, validInput1] }), status: 400, message: /^unexpected 'data' provided when using shared memory for input tensor 'INPUT0' for model 'simple'$/ },
  { name: "outputs is not an array", body: json({ inputs: [validInput0, validInput1], outputs: { name: "OUTPUT0" } }), status: 400, message: /'outputs' must be an array/ },
  { name: "binary_data that is not a boolean", body: json({ inputs: [validInput0, validInput1], outputs: [{ name: "OUTPUT0", parameters: { binary_data: "yes" } }] }), status: 400, message: /binary_data must be a boolean/ },
  { name: "non-numeric version in the URL", path: "/v2/models/simple/versions/latest/infer", body: json({ inputs: [validInput0, validInput1] }), status: 400, message: /version 'latest' is not a number/ },
  { name: "wrong HTTP verb on infer", method: "GET", status: 405, message: /^Method Not Allowed$/ },
  { name: "wrong HTTP verb on health", method: "POST", path: "/v2/health/ready", status: 405, message: /^Method Not Allowed$/ },
  { name: "unknown path", method: "GET", path: "/v2/nothing/here", status: 404, message: /^Not Found$/ },
  { name: "model metadata of an unknown model", method: "GET", path: "/v2/models/ghost", status: 404, message: /unknown model: 'ghost'/ },
  { name: "model load when model control is off", path: "/v2/repository/models/simple/load", status: 503, message: /^explicit model load \/ unload is not allowed if polling is enabled$/ },
  { name: "model load with a config override when model control is off", path: "/v2/repository/models/simple/load", body: json({ parameters: { config: "{}" } }), headers: { "content-type": "application/json" }, status: 503, message: /^explicit model load \/ unload is not allowed/ },
  { name: "UINT64 element of 20 digits", path: "/v2/models/identity_uint64/infer", body: '{"inputs":[{"name":"INPUT0","datatype":"UINT64","shape":[1,1],"data":[18446744073709551616]}]}', status: 400, message: /expected UINT64 elements, got 18446744073709551616$/ },
  { name: "INT32 element of 20 digits", body: `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1,16],"data":[99999999999999999999${",1".repeat(15)}]},${json(validInput1)}]}`, status: 400, message: /expected INT32 elements, got 99999999999999999999$/ },
  { name: "shape dimension beyond 2^53", body: `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1,9007199254740993],"data":[]},${json(validInput1)}]}`, status: 400, message: /^input 'INPUT0' has a dimension 9007199254740993 beyond 2\^53 in its shape$/ },
  // qa/L0_http/http_test.py test_buffer_size_overflow: src/http_server.cc's checks before a JSON input's data is read.
  { name: "element count beyond int64", body: `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[16,1152921504606846978],"data":[1]},${json(validInput1)}]}`, status: 400, message: /^invalid shape for input 'INPUT0': shape \[16,1152921504606846978\] causes total element count to exceed maximum size of 9223372036854775807$/ },
  { name: "byte size beyond int64", body: `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[4,1152921504606846978],"data":[1]},${json(validInput1)}]}`, status: 400, message: /^byte size overflow for input 'INPUT0': element count \(4611686018427387912\) \* data type size \(4\) exceeds maximum allowed size \(9223372036854775807\)$/ },
  { name: "dimension beyond int64", body: `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1,9223372036854775808],"data":[1]},${json(validInput1)}]}`, status: 400, message: /^invalid shape for input 'INPUT0': shape \[1,-9223372036854775808\] contains one or more invalid dimensions$/ },
  // qa/L0_http/http_test.py test_json_recursion_depth_limit: HTTP_MAX_JSON_NESTING_DEPTH (100).
  { name: "data nested 120 deep", body: `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1,16],"data":${"[".repeat(120)}1${"]".repeat(120)}},${json(validInput1)}]}`, status: 400, message: /^JSON nesting depth exceeds maximum allowed limit \(100\)$/ },
  { name: "binary_data_size beyond 2^53", body: `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1,16],"parameters":{"binary_data_size":9007199254740992}},${json(validInput1)}]}`, status: 400, message: /invalid binary_data_size 9007199254740992$/ },
  { name: "the exact-integer parser's marker object sent by the client", path: "/v2/models/identity_int64/infer", body: '{"inputs":[{"name":"INPUT0","datatype":"INT64","shape":[1,2],"data":[{"\\u0000int":"5"},12345678901234567]}]}', status: 400, message: /expected INT64 elements, got \{"\\u0000int":"5"\}$/ },
  { name: "model unload from a foreign Origin", path: "/v2/repository/models/simple/unload", headers: { origin: "http://attacker.example" }, status: 403, message: /^cross-origin request refused: Origin 'http:\/\/attacker.example' is not this server's origin/ },
  { name: "model unload sent as text/plain from another site (an HTML form or a no-cors fetch)", path: "/v2/repository/models/simple/unload", body: "{}", headers: { origin: "http://evil.example", "content-type": "text/plain" }, status: 403, message: /^cross-origin request refused: Origin 'http:\/\/evil.example'/ },
  { name: "CORS preflight", method: "OPTIONS", path: "/v2/repository/models/simple/load", status: 405, message: /^Method Not Allowed$/ },
  { name: "empty body without a Content-Type", body: Buffer.alloc(0), status: 400, message: /^the inference request body is empty: send a JSON object with an 'inputs' array$/ },
  { name: "unknown input with a 20000-character name", body: json({ inputs: [{ ...validInput0, name: "n".repeat(20000) }, validInput1] }), status: 400, message: new RegExp(`^unexpected inference input '${"n".repeat(256)}…\\(20000 chars\\)' for model 'simple'`) },
  { name: "unknown output with a 20000-character name", body: json({ inputs: [validInput0, validInput1], outputs: [{ name: "o".repeat(20000) }] }), status: 400, message: new RegExp(`^unexpected inference output '${"o".repeat(256)}…\\(20000 chars\\)' for model 'simple'$`) },
  { name: "parameter with a 20000-character key", body: json({ inputs: [validInput0, validInput1], parameters: { ["k".repeat(20000)]: [1] } }), status: 400, message: new RegExp(`^parameter '${"k".repeat(256)}…\\(20000 chars\\)' has invalid type\\. It should be either 'int', 'bool', or 'string'\\.$`) },
  { name: "repository index with a non-boolean ready", path: "/v2/repository/index", body: json({ ready: "yes" }), status: 400, message: /^Invalid value for 'ready': expected a boolean$/ }, // qa/L0_http/http_test.py
];

describe("REST bad input: every case gets a 4xx/5xx with {error}, and the server keeps serving", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ args: ["--http-max-input-size", String(MAX_INPUT)] });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it.each(CASES)("$name -> $status", async (c) => {
    const response = await fetch(`${server.httpUrl}${c.path ?? INFER}`, {
      method: c.method ?? "POST",
      body: c.method === "GET" ? undefined : c.body,
      headers: c.headers,
    });
    expect(response.status).toBe(c.status);
    const body = (await response.json()) as { error: string };
    expect(Object.keys(body)).toEqual(["error"]);
    expect(body.error).toMatch(c.message);
  });

  it("answers an empty body sent with Expect: 100-continue with 400, logging no error", async () => {
    const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = httpRequest(`${server.httpUrl}${INFER}`, { method: "POST", headers: { expect: "100-continue", "content-length": "0" } }, (response) => {
        let text = "";
        response.on("data", (chunk: Buffer) => (text += chunk.toString()));
        response.on("end", () => resolve({ status: response.statusCode!, body: text }));
      });
      request.on("continue", () => request.end());
      request.on("error", reject);
      request.flushHeaders();
    });
    expect(status).toBe(400);
    expect(JSON.parse(body)).toEqual({ error: "the inference request body is empty: send a JSON object with an 'inputs' array" });
    expect(server.logs()).not.toMatch(/request failed|TypeError/);
  });

  it("still answers a valid request correctly afterwards", async () => {
    const response = await fetch(`${server.httpUrl}${INFER}`, { method: "POST", body: json({ inputs: [validInput0, validInput1] }) });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { outputs: { name: string; data: number[] }[] };
    expect(body.outputs[0]!.data).toEqual(validInput0.data.map((v) => v * 2));
    expect(server.process.exitCode).toBeNull();
  });
});

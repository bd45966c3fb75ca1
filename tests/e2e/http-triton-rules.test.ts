import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openRaw } from "../helpers/raw-connection";
import { type RunningServer, startServer } from "../helpers/server-process";

function identityModel(repository: string, name: string, io: string): void {
  mkdirSync(path.join(repository, name, "1"), { recursive: true });
  writeFileSync(path.join(repository, name, "config.pbtxt"), `backend: "identity"\nmax_batch_size: 8\n${io}`);
}

/** The binary tensor data extension's body: the JSON header, then each binary part. */
function binaryBody(header: unknown, ...parts: Uint8Array[]): { body: Buffer; headerLength: number } {
  const json = Buffer.from(JSON.stringify(header));
  return { body: Buffer.concat([json, ...parts]), headerLength: json.byteLength };
}

const bytesElement = (bytes: number[]): Buffer => Buffer.concat([Buffer.from(new Uint32Array([bytes.length]).buffer), Buffer.from(bytes)]);

/** Rules of Triton's HTTP frontend (server src/http_server.cc) that a client can see on the wire. */
describe("HTTP: Triton's binary-data and body rules", () => {
  let repository: string;
  let server: RunningServer;

  beforeAll(async () => {
    repository = mkdtempSync(path.join(os.tmpdir(), "http-rules-"));
    identityModel(repository, "pair", `input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 2 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ 2 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 2 ] }, { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 2 ] } ]`);
    identityModel(repository, "text", `input [ { name: "INPUT0" data_type: TYPE_STRING dims: [ 1 ] } ]\noutput [ { name: "OUTPUT0" data_type: TYPE_STRING dims: [ 1 ] } ]`);
    server = await startServer({ repository });
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(repository, { recursive: true, force: true });
  });

  const pairInputs = [
    { name: "INPUT0", datatype: "INT32", shape: [1, 2], data: [1, 2] },
    { name: "INPUT1", datatype: "INT32", shape: [1, 2], data: [3, 4] },
  ];

  it("binary_data_output is the default only for outputs not listed: a listed output without binary_data is JSON", async () => {
    const response = await fetch(`${server.httpUrl}/v2/models/pair/infer`, {
      method: "POST",
      body: JSON.stringify({ inputs: pairInputs, outputs: [{ name: "OUTPUT0" }, { name: "OUTPUT1", parameters: { binary_data: true } }], parameters: { binary_data_output: true } }),
    });
    const bytes = Buffer.from(await response.arrayBuffer());
    const headerLength = Number(response.headers.get("inference-header-content-length"));
    const header = JSON.parse(bytes.subarray(0, headerLength).toString()) as { outputs: Record<string, unknown>[] };
    expect(header.outputs[0]).toEqual({ name: "OUTPUT0", datatype: "INT32", shape: [1, 2], data: [1, 2] });
    expect(header.outputs[1]).toMatchObject({ name: "OUTPUT1", parameters: { binary_data_size: 8 } });
    expect([...new Int32Array(bytes.buffer.slice(bytes.byteOffset + headerLength))]).toEqual([3, 4]);
  });

  it("binary_data_output applies to every output when none is listed", async () => {
    const response = await fetch(`${server.httpUrl}/v2/models/pair/infer`, {
      method: "POST", body: JSON.stringify({ inputs: pairInputs, parameters: { binary_data_output: true } }),
    });
    const bytes = Buffer.from(await response.arrayBuffer());
    const headerLength = Number(response.headers.get("inference-header-content-length"));
    const header = JSON.parse(bytes.subarray(0, headerLength).toString()) as { outputs: Record<string, unknown>[] };
    expect(header.outputs.map((o) => o["parameters"])).toEqual([{ binary_data_size: 8 }, { binary_data_size: 8 }]);
  });

  it("takes a raw binary body for a batching BYTES model with dims [1] as one element of shape [1, 1]", async () => {
    const response = await fetch(`${server.httpUrl}/v2/models/text/infer`, {
      method: "POST", body: "hello raw", headers: { "inference-header-content-length": "0" },
    });
    expect(response.status).toBe(200);
    const bytes = Buffer.from(await response.arrayBuffer());
    const headerLength = Number(response.headers.get("inference-header-content-length"));
    expect(JSON.parse(bytes.subarray(0, headerLength).toString())).toMatchObject({ outputs: [{ name: "OUTPUT0", datatype: "BYTES", shape: [1, 1] }] });
    expect(bytes.subarray(headerLength)).toEqual(bytesElement([...Buffer.from("hello raw")]));
  });

  it("refuses a raw binary body for a model of two inputs with Triton's message", async () => {
    const response = await fetch(`${server.httpUrl}/v2/models/pair/infer`, {
      method: "POST", body: Buffer.alloc(16), headers: { "inference-header-content-length": "0" },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: "Raw request must only have 1 input (found 1) to be deduced but got 2 inputs in 'pair' model configuration" });
  });

  it("refuses to write BYTES that are not UTF-8 as JSON text, and returns them as binary data", async () => {
    const element = bytesElement([0x68, 0xff, 0xfe]);
    const input = { name: "INPUT0", datatype: "BYTES", shape: [1, 1], parameters: { binary_data_size: element.byteLength } };
    const asJson = binaryBody({ inputs: [input] }, element);
    const refused = await fetch(`${server.httpUrl}/v2/models/text/infer`, {
      method: "POST", body: asJson.body, headers: { "inference-header-content-length": String(asJson.headerLength) },
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({ error: `BYTES element 0 of output 'OUTPUT0' is not valid UTF-8, which JSON cannot carry; request the output with "binary_data": true` });

    const asBinary = binaryBody({ inputs: [input], outputs: [{ name: "OUTPUT0", parameters: { binary_data: true } }] }, element);
    const served = await fetch(`${server.httpUrl}/v2/models/text/infer`, {
      method: "POST", body: asBinary.body, headers: { "inference-header-content-length": String(asBinary.headerLength) },
    });
    expect(served.status).toBe(200);
    const bytes = Buffer.from(await served.arrayBuffer());
    expect(bytes.subarray(Number(served.headers.get("inference-header-content-length")))).toEqual(element);
  });

  it("refuses a request with both Transfer-Encoding: chunked and Content-Length (Node's parser; see the Compatibility table)", async () => {
    const body = JSON.stringify({ inputs: pairInputs });
    const chunked = `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
    const connection = await openRaw(server.httpPort!, `POST /v2/models/pair/infer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: ${body.length}\r\n\r\n${chunked}`);
    await connection.closed;
    expect(connection.received()).toMatch(/^HTTP\/1\.1 400 /);
  });

  it("answers every JSON endpoint, its errors included, with Content-Type application/json exactly, as Triton", async () => {
    // Triton's AddContentTypeHeader(req, "application/json") (src/http_server.cc); qa/L0_http/generate_endpoint_test.py
    // compares the header whole.
    const requests: readonly [string, RequestInit?][] = [
      ["/v2"], ["/v2/models/pair"], ["/v2/models/pair/config"], ["/v2/models/pair/stats"], ["/v2/logging"], ["/v2/trace/setting"],
      ["/v2/systemsharedmemory/status"], ["/v2/repository/index", { method: "POST" }],
      ["/v2/models/pair/infer", { method: "POST", body: JSON.stringify({ inputs: pairInputs }) }],
      ["/v2/models/pair/generate", { method: "POST", body: JSON.stringify({ INPUT0: [1, 2], INPUT1: [3, 4] }) }],
      ["/v2/models/pair/infer", { method: "POST", body: "{" }], ["/v2/models/nothing"], ["/v2/no/such/path"], ["/v2/models/pair/infer"],
    ];
    for (const [url, init] of requests) {
      const response = await fetch(`${server.httpUrl}${url}`, init);
      expect({ url, method: init?.method ?? "GET", type: response.headers.get("content-type") }).toEqual({ url, method: init?.method ?? "GET", type: "application/json" });
      await response.arrayBuffer();
    }
  });
});

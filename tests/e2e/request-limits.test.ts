import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { joinBytesElements as bytesPayload } from "../../protocol/tensor-bytes";
import { processMemory } from "../helpers/process-memory";
import { type RunningServer, startServer } from "../helpers/server-process";
import { grpcCallError as grpcError, GrpcTestClient } from "./grpc-transport";
import { binaryRequest } from "./http-transport";

/** A binary-extension infer body for identity_bytes' INPUT0 `[1, count]`, output asked for in binary. */
function identityBytesBody(payload: Uint8Array, count: number): { body: Buffer; headers: Record<string, string> } {
  return binaryRequest("BYTES", count, payload, true);
}

async function inferHttp(server: RunningServer, model: string, request: { body: Buffer; headers: Record<string, string> }): Promise<{ status: number; text: string }> {
  const response = await fetch(`${server.httpUrl}/v2/models/${model}/infer`, { method: "POST", ...request });
  return { status: response.status, text: response.status === 200 ? "" : await response.text() };
}

function inferGrpc(client: GrpcTestClient, payload: Uint8Array, shape: readonly number[]): Promise<unknown> {
  return client.unary("ModelInfer", {
    model_name: "identity_bytes", inputs: [{ name: "INPUT0", datatype: "BYTES", shape }], raw_input_contents: [payload],
  });
}

const elements = (count: number, size: number): Buffer[] => Array.from({ length: count }, (_, i) => Buffer.alloc(size, 97 + (i % 26)));

describe("request limits: --max-bytes-elements, --max-bytes-element-size and the shape element bound", () => {
  let server: RunningServer;
  let client: GrpcTestClient;
  beforeAll(async () => {
    server = await startServer({
      services: ["http", "grpc"],
      args: ["--model-control-mode", "explicit", "--load-model", "identity_bytes", "--load-model", "identity_fp32", "--max-bytes-elements", "8", "--max-bytes-element-size", "16"],
    });
    client = new GrpcTestClient(server.grpcAddress!);
  });
  afterAll(async () => {
    client?.close();
    await server?.stop();
  });

  it("serves a BYTES tensor at both limits exactly", async () => {
    expect(await inferHttp(server, "identity_bytes", identityBytesBody(bytesPayload(elements(8, 16)), 8))).toEqual({ status: 200, text: "" });
    const response = await inferGrpc(client, bytesPayload(elements(8, 16)), [1, 8]) as { raw_output_contents: Buffer[] };
    expect(Buffer.compare(response.raw_output_contents[0]!, bytesPayload(elements(8, 16)))).toBe(0);
  });

  it("refuses one BYTES element more than --max-bytes-elements: 400 / INVALID_ARGUMENT, before reading the elements", async () => {
    const message = "input 'INPUT0' shape [1,9] has 9 BYTES elements, more than the 8 allowed (--max-bytes-elements)";
    expect(await inferHttp(server, "identity_bytes", identityBytesBody(bytesPayload(elements(9, 1)), 9))).toEqual({ status: 400, text: JSON.stringify({ error: message }) });
    const error = await grpcError(inferGrpc(client, bytesPayload(elements(9, 1)), [1, 9]));
    expect({ code: error.code, details: error.details }).toEqual({ code: status.INVALID_ARGUMENT, details: message });
  });

  it("refuses a BYTES element one byte over --max-bytes-element-size", async () => {
    const message = "BYTES element 1 of input 'INPUT0' has 17 bytes, more than the 16 allowed (--max-bytes-element-size)";
    const payload = bytesPayload([Buffer.alloc(16), Buffer.alloc(17)]);
    expect(await inferHttp(server, "identity_bytes", identityBytesBody(payload, 2))).toEqual({ status: 400, text: JSON.stringify({ error: message }) });
    const error = await grpcError(inferGrpc(client, payload, [1, 2]));
    expect({ code: error.code, details: error.details }).toEqual({ code: status.INVALID_ARGUMENT, details: message });
  });

  it("refuses a shape of more than 2^31 - 1 elements before sizing anything from it", async () => {
    const error = await grpcError(client.unary("ModelInfer", {
      model_name: "identity_fp32", inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, 2 ** 31] }], raw_input_contents: [Buffer.alloc(4)],
    }));
    expect({ code: error.code, details: error.details }).toEqual({
      code: status.INVALID_ARGUMENT, details: "input 'INPUT0' shape [1,2147483648] has 2147483648 elements, more than the 2147483647 allowed",
    });
  });

  it("keeps serving after every refusal", async () => {
    expect(await inferHttp(server, "identity_bytes", identityBytesBody(bytesPayload(elements(2, 3)), 2))).toEqual({ status: 200, text: "" });
  });
});

/** The server's resident set now and at its peak, MB. */
function memoryMb(server: RunningServer): { rss: number; peak: number } {
  const { rssBytes, peakBytes } = processMemory(server.process.pid!);
  return { rss: rssBytes / 2 ** 20, peak: peakBytes / 2 ** 20 };
}

describe("the default BYTES element bound", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ args: ["--model-control-mode", "explicit", "--load-model", "identity_bytes"] });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("serves the most elements allowed (2^20 empty strings) in memory a small multiple of the body", async () => {
    const count = 1 << 20;
    const request = identityBytesBody(Buffer.alloc(4 * count), count);
    const before = memoryMb(server);
    expect(await inferHttp(server, "identity_bytes", request)).toEqual({ status: 200, text: "" });
    // Each element becomes a JS string and an ONNX Runtime std::string on the way in and out; before the bound
    // was kept per element (views, offset arrays, one Uint8Array per output string) this took ~110x the body.
    expect(memoryMb(server).peak - before.rss).toBeLessThan(64 * (request.body.byteLength / 2 ** 20));
  });

  it("refuses 16 M empty BYTES elements in a 64 MB body at once, instead of spending gigabytes and a minute on them", async () => {
    const count = 16 * 1024 * 1024 - 64;
    const answer = await inferHttp(server, "identity_bytes", identityBytesBody(Buffer.alloc(4 * count), count));
    expect(answer).toEqual({
      status: 400,
      text: JSON.stringify({ error: `input 'INPUT0' shape [1,${count}] has ${count} BYTES elements, more than the 1048576 allowed (--max-bytes-elements)` }),
    });
    expect(await inferHttp(server, "identity_bytes", identityBytesBody(bytesPayload(elements(3, 2)), 3))).toEqual({ status: 200, text: "" });
  });
});

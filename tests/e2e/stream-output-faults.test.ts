import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXAMPLE_REPOSITORY, type RunningServer, startServer } from "../helpers/server-process";
import { type GrpcMessage, GrpcTestClient, streamResponses } from "./grpc-transport";

/**
 * A decoupled model whose responses are each an unlucky or malformed output, chosen by the request parameter
 * `kind`; every stream ends with the final flag alone. Outputs TEXT (BYTES [-1]) and VALUE (FP32 [-1]), or, for
 * the model configured with HALF (FP16 [1]), that one.
 */
const ODD_STREAM_JS = String.raw`
"use strict";
const text = (bytes) => ({ datatype: "BYTES", shape: [bytes.length], data: bytes.map((b) => Uint8Array.from(b)) });
const value = (...v) => ({ datatype: "FP32", shape: [v.length], data: Float32Array.from(v) });
const KINDS = {
  "split-utf8": () => [...Buffer.from("café €😀")].map((byte, i) => ({ outputs: { TEXT: text([[byte]]), VALUE: value(i) } })),
  "escapes": () => [{ outputs: { TEXT: text([[0x22, 0x5c, 0x0a, 0x01, 0x7f], []]), VALUE: value(0) } }],
  "non-finite": () => [{ outputs: { TEXT: text([[0x61]]), VALUE: value(NaN, Infinity, -Infinity) } }],
  "missing-output": () => [{ outputs: { VALUE: value(1) } }, { outputs: { TEXT: text([[0x62]]), VALUE: value(2) } }],
  "wrong-shape": () => [{ outputs: { TEXT: { datatype: "BYTES", shape: [3], data: [Uint8Array.of(0x61)] }, VALUE: value(1) } }, { outputs: { TEXT: text([[0x62]]), VALUE: value(2) } }],
  "half": () => [{ outputs: { HALF: { datatype: "FP16", shape: [1], data: Uint16Array.of(0x3c00) } } }, { outputs: { HALF: { datatype: "FP16", shape: [1], data: Uint16Array.of(0x4000) } } }],
};
class OddStream {
  execute(requests) {
    for (const request of requests) {
      const sender = request.responseSender;
      for (const response of KINDS[request.parameters.kind]()) sender.send(response);
      sender.send(undefined, { final: true });
    }
  }
}
module.exports = OddStream;
`;

function writeOddModel(repository: string, name: string, outputs: readonly string[]): void {
  const dir = path.join(repository, name);
  mkdirSync(path.join(dir, "1"), { recursive: true });
  writeFileSync(path.join(dir, "1", "model.js"), ODD_STREAM_JS);
  writeFileSync(path.join(dir, "config.pbtxt"), [
    'backend: "typescript"', "max_batch_size: 0",
    'input [ { name: "COUNT" data_type: TYPE_INT32 dims: [ 1 ] } ]',
    `output [ ${outputs.join(", ")} ]`,
    "model_transaction_policy { decoupled: true }",
  ].join("\n"));
}

const TEXT_AND_VALUE = ['{ name: "TEXT" data_type: TYPE_STRING dims: [ -1 ] }', '{ name: "VALUE" data_type: TYPE_FP32 dims: [ -1 ] }'];
const HALF = ['{ name: "HALF" data_type: TYPE_FP16 dims: [ 1 ] }'];

const event = (json: string | Buffer): Buffer => Buffer.concat([Buffer.from("data: "), Buffer.from(json), Buffer.from("\n\n")]);

describe("malformed and unlucky outputs on every streaming path never end the server", () => {
  let repository: string;
  let server: RunningServer;
  let grpc: GrpcTestClient;

  beforeAll(async () => {
    repository = mkdtempSync(path.join(os.tmpdir(), "odd-stream-"));
    writeOddModel(repository, "odd_stream", TEXT_AND_VALUE);
    writeOddModel(repository, "odd_half", HALF);
    server = await startServer({ repository, services: ["http", "grpc"] });
    grpc = new GrpcTestClient(server.grpcAddress!);
  });
  afterAll(async () => {
    grpc?.close();
    await server?.stop();
    rmSync(repository, { recursive: true, force: true });
  });

  const post = async (route: "generate" | "generate_stream", model: string, kind: string): Promise<{ status: number; body: Buffer }> => {
    const response = await fetch(`${server.httpUrl}/v2/models/${model}/${route}`, { method: "POST", body: JSON.stringify({ COUNT: 0, kind }) });
    return { status: response.status, body: Buffer.from(await response.arrayBuffer()) };
  };
  const stillServing = async (): Promise<void> => {
    expect(server.process.exitCode).toBeNull();
    expect((await fetch(`${server.httpUrl}/v2/health/live`)).status).toBe(200);
  };

  it("generate_stream passes a multi-byte character split over responses through as the model's bytes (Triton's rapidjson does not validate)", async () => {
    const { status, body } = await post("generate_stream", "odd_stream", "split-utf8");
    expect(status).toBe(200);
    const bytes = [...Buffer.from("café €😀")];
    expect(body).toEqual(Buffer.concat(bytes.map((byte, i) => event(Buffer.concat([
      Buffer.from(`{"TEXT":"`), Buffer.of(byte), Buffer.from(`","VALUE":${i}.0,"model_name":"odd_stream","model_version":"1"}`),
    ])))));
    await stillServing();
  });

  it("generate_stream escapes as rapidjson, writes non-finite numbers by name, and answers an output it cannot send as that response's error event", async () => {
    expect((await post("generate_stream", "odd_stream", "escapes")).body.toString("latin1")).toBe(
      event(Buffer.from('{"TEXT":["\\"\\\\\\n\\u0001\x7f",""],"VALUE":0.0,"model_name":"odd_stream","model_version":"1"}')).toString("latin1"),
    );
    expect((await post("generate_stream", "odd_stream", "non-finite")).body.toString()).toBe(
      event('{"TEXT":"a","VALUE":[NaN,Infinity,-Infinity],"model_name":"odd_stream","model_version":"1"}').toString(),
    );
    const half = await post("generate_stream", "odd_half", "half");
    expect(half.status).toBe(400);
    expect(half.body.toString()).toBe(Buffer.concat([0, 1].map(() => event(JSON.stringify({
      error: "sending FP16 data via JSON is not supported. Please use the binary data format for output",
    })))).toString());
    await stillServing();
  });

  it.each(["missing-output", "wrong-shape"])("a %s response becomes an error event and the stream goes on to its end", async (kind) => {
    const { body } = await post("generate_stream", "odd_stream", kind);
    const events = body.toString().split("\n\n").filter((e) => e !== "").map((e) => JSON.parse(e.replace(/^data: /, "")) as Record<string, unknown>);
    expect(events).toHaveLength(2);
    expect(typeof events[0]!["error"]).toBe("string");
    expect(events[1]).toEqual({ TEXT: "b", VALUE: 2, model_name: "odd_stream", model_version: "1" });
    await stillServing();
  });

  it("generate answers one unlucky response with its bytes, and one JSON cannot carry as a 400 error", async () => {
    const escapes = await post("generate", "odd_stream", "escapes");
    expect(escapes.status).toBe(200);
    expect(escapes.body.toString("latin1")).toBe('{"TEXT":["\\"\\\\\\n\\u0001\x7f",""],"VALUE":0.0,"model_name":"odd_stream","model_version":"1"}');
    const split = await post("generate", "odd_stream", "split-utf8");
    expect(JSON.parse(split.body.toString())).toEqual({
      error: "generate expects model to produce exactly 1 response, use generate stream for model that generates various number of responses",
    });
    await stillServing();
  });

  it("ModelStreamInfer carries every kind as raw outputs or the response's error_message", async () => {
    const request = (model: string, kind: string): GrpcMessage => ({
      model_name: model, parameters: { kind: { string_param: kind } },
      inputs: [{ name: "COUNT", datatype: "INT32", shape: ["1"], contents: { int_contents: [0] } }],
    });
    const kinds = ["split-utf8", "escapes", "non-finite", "missing-output", "wrong-shape"];
    const messages = await streamResponses(grpc.modelStreamInfer(), [...kinds.map((kind) => request("odd_stream", kind)), request("odd_half", "half")]);
    const texts = messages.flatMap((m) => {
      const response = m["infer_response"] as { outputs: { name: string }[]; raw_output_contents: Buffer[] };
      const index = response.outputs.findIndex((o) => o.name === "TEXT");
      return index < 0 ? [] : [response.raw_output_contents[index]!];
    });
    const splitBytes = texts.slice(0, Buffer.from("café €😀").length).map((raw) => raw.subarray(4));
    expect(Buffer.concat(splitBytes).toString()).toBe("café €😀");
    const errors = messages.filter((m) => m["error_message"] !== "");
    expect(errors).toHaveLength(2);
    expect(messages.filter((m) => m["error_message"] === "")).toHaveLength(Buffer.from("café €😀").length + 1 + 1 + 1 + 1 + 2);
    await stillServing();
  });
});

describe("the example text_generator with a non-ASCII prompt (one byte per response)", () => {
  let server: RunningServer;

  beforeAll(async () => {
    server = await startServer({ repository: EXAMPLE_REPOSITORY, args: ["--model-control-mode", "explicit", "--load-model", "text_generator"] });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("streams the split character's bytes over generate_stream and goes on serving", async () => {
    const response = await fetch(`${server.httpUrl}/v2/models/text_generator/generate_stream`, {
      method: "POST", body: JSON.stringify({ text_input: "café", max_tokens: 4 }),
    });
    expect(response.status).toBe(200);
    const body = Buffer.from(await response.arrayBuffer());
    const token = (byte: number): Buffer => event(Buffer.concat([Buffer.from('{"model_name":"text_generator","model_version":"1","text_output":"'), Buffer.of(byte), Buffer.from('"}')]));
    // The prompt's last byte (0xA9) has no successor, so generation restarts at 'c' and runs into the first half of 'é'.
    expect(body).toEqual(Buffer.concat([0x63, 0x61, 0x66, 0xc3].map(token)));
    expect((await fetch(`${server.httpUrl}/v2/health/live`)).status).toBe(200);
    expect(server.process.exitCode).toBeNull();
  });
});

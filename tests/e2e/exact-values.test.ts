import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { joinBytesElements } from "../../protocol/tensor-bytes";
import { EXAMPLE_REPOSITORY, type RunningServer, startServer } from "../helpers/server-process";
import { GrpcCallError, GrpcTestClient } from "./grpc-transport";
import { binaryRequest } from "./http-transport";

/** Triton's BYTES serialization as a Buffer: toEqual tells a Buffer from a Uint8Array, and the responses' binary tails are Buffers. */
const bytesTensor = (elements: readonly Buffer[]): Buffer => Buffer.from(joinBytesElements(elements));

/** The binary tail of a response (everything after its JSON header). */
async function binaryOutput(response: Response): Promise<Buffer> {
  const bytes = Buffer.from(await response.arrayBuffer());
  return bytes.subarray(Number(response.headers.get("inference-header-content-length")));
}

describe("exact values: floats as rapidjson writes them, BYTES byte for byte or refused", () => {
  let repository: string;
  let server: RunningServer;
  let client: GrpcTestClient;
  const infer = (model: string, body: Buffer | string, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${server.httpUrl}/v2/models/${model}/infer`, { method: "POST", body, headers });

  beforeAll(async () => {
    repository = mkdtempSync(path.join(os.tmpdir(), "exact-values-"));
    for (const model of ["identity_fp32", "identity_fp64", "identity_bytes"]) {
      cpSync(path.join(EXAMPLE_REPOSITORY, model), path.join(repository, model), { recursive: true });
    }
    mkdirSync(path.join(repository, "identity_bytes_builtin", "1"), { recursive: true });
    writeFileSync(path.join(repository, "identity_bytes_builtin", "config.pbtxt"), `backend: "identity"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]`);
    server = await startServer({ repository, services: ["http", "grpc"] });
    client = new GrpcTestClient(server.grpcAddress!);
  });
  afterAll(async () => {
    client?.close();
    await server?.stop();
    rmSync(repository, { recursive: true, force: true });
  });

  it("writes FP32 JSON outputs as Triton's rapidjson does: -0.0 keeps its sign, integral values end in .0, NaN and infinities by name", async () => {
    const values = [-0, 0, 1, -2.5, 0.1, 1e21, 1e-7, 3.4e38, 123456, 0.000001, Number.NaN, Infinity, -Infinity];
    const { body, headers } = binaryRequest("FP32", values.length, Buffer.from(new Float32Array(values).buffer), false);
    const response = await infer("identity_fp32", body, headers);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain(
      '"data":[-0.0,0.0,1.0,-2.5,0.10000000149011612,1.0000000200408773e21,1.0000000116860974e-7,3.3999999521443642e38,123456.0,' +
      "9.999999974752427e-7,NaN,Infinity,-Infinity]",
    );
  });

  it("writes FP64 JSON outputs the same way", async () => {
    const values = [-0, 5, 1e300, 1.5e-300, 123456789012345680000, 0.000001, 1e-7, 2 ** 53];
    const { body, headers } = binaryRequest("FP64", values.length, Buffer.from(new Float64Array(values).buffer), false);
    const response = await infer("identity_fp64", body, headers);
    expect(await response.text()).toContain('"data":[-0.0,5.0,1e300,1.5e-300,123456789012345680000.0,0.000001,1e-7,9007199254740992.0]');
  });

  it("reads -0.0, NaN and infinities in JSON inputs, as rapidjson's kParseNanAndInfFlag does", async () => {
    const body = '{"inputs":[{"name":"INPUT0","datatype":"FP64","shape":[1,7],"data":[-0.0,NaN,Infinity,-Infinity,Inf,-Inf,-NaN]}],' +
      '"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true}}]}';
    const response = await infer("identity_fp64", body);
    expect(response.status).toBe(200);
    const values = [...new Float64Array(new Uint8Array(await binaryOutput(response)).buffer)];
    expect(values).toEqual([-0, Number.NaN, Infinity, -Infinity, Infinity, -Infinity, Number.NaN]);
    expect(Object.is(values[0], -0)).toBe(true);
    // Inside strings these names are text, and a BYTES element stays one.
    const text = await infer("identity_bytes", JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "BYTES", shape: [1, 2], data: ["NaN", "-Infinity"] }] }));
    expect(((await text.json()) as { outputs: { data: string[] }[] }).outputs[0]!.data).toEqual(["NaN", "-Infinity"]);
  });

  const VALID_UTF8 = [Buffer.from("héllo"), Buffer.from("日本語"), Buffer.from("🙂"), Buffer.alloc(0)];

  it("returns valid UTF-8 BYTES elements byte for byte through an ONNX Runtime model", async () => {
    const { body, headers } = binaryRequest("BYTES", VALID_UTF8.length, bytesTensor(VALID_UTF8), true);
    const response = await infer("identity_bytes", body, headers);
    expect(response.status).toBe(200);
    expect(await binaryOutput(response)).toEqual(bytesTensor(VALID_UTF8));
  });

  it("refuses, naming the element, BYTES an ONNX Runtime model cannot receive unaltered (not UTF-8, or holding a NUL byte)", async () => {
    const notUtf8 = [Buffer.from("ok"), Buffer.from([0x61, 0xff, 0xfe, 0x62])];
    const notUtf8Request = binaryRequest("BYTES", notUtf8.length, bytesTensor(notUtf8), true);
    const refused = await infer("identity_bytes", notUtf8Request.body, notUtf8Request.headers);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string }).error).toMatch(/^input 'INPUT0' element 1 of model 'identity_bytes' is not valid UTF-8: /);
    const withNul = [Buffer.from("a\u0000b")];
    const nulRequest = binaryRequest("BYTES", 1, bytesTensor(withNul), true);
    const nul = await infer("identity_bytes", nulRequest.body, nulRequest.headers);
    expect(nul.status).toBe(400);
    expect(((await nul.json()) as { error: string }).error).toMatch(/^input 'INPUT0' element 0 of model 'identity_bytes' holds a NUL byte: /);
    const grpc = await client.unary("ModelInfer", {
      model_name: "identity_bytes", inputs: [{ name: "INPUT0", datatype: "BYTES", shape: [1, 2] }], raw_input_contents: [bytesTensor(notUtf8)],
    }).then(() => undefined, (error: unknown) => error);
    expect(grpc).toBeInstanceOf(GrpcCallError);
    expect(grpc).toMatchObject({ code: status.INVALID_ARGUMENT, details: expect.stringMatching(/element 1 of model 'identity_bytes' is not valid UTF-8/) });
    // The built-in identity backend carries any bytes, so it takes the same request as it is.
    const builtin = await infer("identity_bytes_builtin", notUtf8Request.body, notUtf8Request.headers);
    expect(builtin.status).toBe(200);
    expect(await binaryOutput(builtin)).toEqual(bytesTensor(notUtf8));
  });
});

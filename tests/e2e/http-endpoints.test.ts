import { gunzipSync, gzipSync, inflateSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../helpers/server-process";

const simpleBody = {
  id: "req-42",
  inputs: [
    { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]] },
    { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: Array(16).fill(1) },
  ],
};

describe("KServe v2 REST endpoints", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server?.stop();
  });
  const get = (path: string): Promise<Response> => fetch(`${server.httpUrl}${path}`);

  it("answers health with Triton's empty 200s", async () => {
    for (const path of ["/v2/health/live", "/v2/health/ready", "/v2/models/simple/ready", "/v2/models/simple/versions/1/ready"]) {
      const response = await get(path);
      expect(response.status, path).toBe(200);
      expect(await response.text(), path).toBe("");
    }
  });

  it("reports server metadata with the extensions it implements, in Triton's order (no CUDA shared memory)", async () => {
    expect(await (await get("/v2")).json()).toEqual({
      name: "triton", version: expect.stringMatching(/^\d+\.\d+\.\d+$/),
      extensions: [
        "classification", "sequence", "model_repository", "model_repository(unload_dependents)", "schedule_policy", "model_configuration",
        "system_shared_memory", "binary_tensor_data", "parameters", "statistics", "trace", "logging",
      ],
    });
  });

  it("reports model metadata like Triton: versions as strings, -1 batch dim", async () => {
    expect(await (await get("/v2/models/simple")).json()).toEqual({
      name: "simple", versions: ["1"], platform: "onnxruntime_onnx",
      inputs: [{ name: "INPUT0", datatype: "INT32", shape: [-1, 16] }, { name: "INPUT1", datatype: "INT32", shape: [-1, 16] }],
      outputs: [{ name: "OUTPUT0", datatype: "INT32", shape: [-1, 16] }, { name: "OUTPUT1", datatype: "INT32", shape: [-1, 16] }],
    });
    expect(await (await get("/v2/models/identity_bf16/versions/1")).json()).toMatchObject({ versions: ["1"], platform: "identity" });
  });

  it("echoes the request id and accepts nested JSON data", async () => {
    const response = await fetch(`${server.httpUrl}/v2/models/simple/infer`, { method: "POST", body: JSON.stringify(simpleBody) });
    const body = (await response.json()) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(["id", "model_name", "model_version", "outputs"]);
    expect(body).toMatchObject({ id: "req-42", model_name: "simple", model_version: "1" });
  });

  it("decompresses a gzip request and compresses the response when asked", async () => {
    const response = await fetch(`${server.httpUrl}/v2/models/simple/infer`, {
      method: "POST", body: gzipSync(JSON.stringify(simpleBody)),
      headers: { "content-encoding": "gzip", "accept-encoding": "gzip" },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-encoding")).toBe("gzip");
    // fetch decodes gzip transparently; check the wire bytes with a raw request too.
    expect(((await response.json()) as { outputs: { data: number[] }[] }).outputs[0]!.data[15]).toBe(16);
    const { request } = await import("undici");
    const raw = await request(`${server.httpUrl}/v2/models/simple/infer`, {
      method: "POST", body: JSON.stringify(simpleBody), headers: { "accept-encoding": "deflate" },
    });
    expect(raw.headers["content-encoding"]).toBe("deflate");
    const json = JSON.parse(inflateSync(Buffer.from(await raw.body.arrayBuffer())).toString()) as { outputs: { data: number[] }[] };
    expect(json.outputs[1]!.data[0]).toBe(-1);
    const gz = await request(`${server.httpUrl}/v2/models/simple/infer`, {
      method: "POST", body: JSON.stringify(simpleBody), headers: { "accept-encoding": "gzip, deflate" },
    });
    expect(gz.headers["content-encoding"]).toBe("gzip");
    expect(JSON.parse(gunzipSync(Buffer.from(await gz.body.arrayBuffer())).toString())).toMatchObject({ model_name: "simple" });
  });

  it("compresses only inference responses, as Triton does: errors and every other endpoint go out as they are", async () => {
    const { request } = await import("undici");
    // What aiohttp (tritonclient.http.aio) sends by default, with its automatic decompression turned off.
    const headers = { "accept-encoding": "gzip, deflate" };
    const plain = async (method: "GET" | "POST", route: string, body?: string): Promise<{ status: number; json: unknown }> => {
      const response = await request(`${server.httpUrl}${route}`, { method, body, headers });
      expect(response.headers["content-encoding"], route).toBeUndefined();
      return { status: response.statusCode, json: JSON.parse(Buffer.from(await response.body.arrayBuffer()).toString()) };
    };
    expect((await plain("GET", "/v2")).json).toMatchObject({ name: "triton" });
    expect((await plain("GET", "/v2/models/simple")).json).toMatchObject({ name: "simple" });
    expect((await plain("GET", "/v2/models/simple/config")).json).toMatchObject({ name: "simple" });
    expect((await plain("GET", "/v2/models/simple/stats")).json).toMatchObject({ model_stats: [{ name: "simple" }] });
    expect((await plain("GET", "/v2/models/stats")).json).toMatchObject({ model_stats: expect.any(Array) });
    expect((await plain("POST", "/v2/repository/index", "{}")).json).toEqual(expect.arrayContaining([expect.objectContaining({ name: "simple" })]));
    const unknownModel = await plain("POST", "/v2/models/ghost/infer", JSON.stringify(simpleBody));
    expect(unknownModel).toEqual({ status: 404, json: { error: expect.stringMatching(/unknown model: 'ghost'/) } });
    const badInput = await plain("POST", "/v2/models/simple/infer", JSON.stringify({ inputs: [] }));
    expect(badInput.status).toBe(400);
    expect((await plain("GET", "/v2/models/ghost")).status).toBe(404);
  });

  it("takes a raw binary body (Inference-Header-Content-Length: 0) for a single-input model and answers in binary", async () => {
    const input = new Float32Array([1.5, -2, 3.25]);
    const response = await fetch(`${server.httpUrl}/v2/models/identity_fp32/infer`, {
      method: "POST", body: Buffer.from(input.buffer), headers: { "inference-header-content-length": "0" },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/octet-stream");
    const bytes = Buffer.from(await response.arrayBuffer());
    const headerLength = Number(response.headers.get("inference-header-content-length"));
    expect(JSON.parse(bytes.subarray(0, headerLength).toString())).toMatchObject({
      outputs: [{ name: "OUTPUT0", datatype: "FP32", shape: [1, 3], parameters: { binary_data_size: 12 } }],
    });
    expect([...new Float32Array(bytes.buffer.slice(bytes.byteOffset + headerLength))]).toEqual([1.5, -2, 3.25]);
  });

  it("mixes JSON and binary outputs per output's binary_data", async () => {
    const response = await fetch(`${server.httpUrl}/v2/models/simple/infer`, {
      method: "POST",
      body: JSON.stringify({ ...simpleBody, outputs: [{ name: "OUTPUT0", parameters: { binary_data: true } }, { name: "OUTPUT1" }] }),
    });
    const bytes = Buffer.from(await response.arrayBuffer());
    const headerLength = Number(response.headers.get("inference-header-content-length"));
    const header = JSON.parse(bytes.subarray(0, headerLength).toString()) as { outputs: Record<string, unknown>[] };
    expect(header.outputs[0]).toMatchObject({ name: "OUTPUT0", parameters: { binary_data_size: 64 } });
    expect(header.outputs[1]).toMatchObject({ name: "OUTPUT1", data: Array.from({ length: 16 }, (_, i) => i - 1) });
    expect([...new Int32Array(bytes.buffer.slice(bytes.byteOffset + headerLength))]).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
  });

  it("reports Triton's statistics fields, counting inferences and executions", async () => {
    const before = ((await (await get("/v2/models/identity_int8/stats")).json()) as { model_stats: { inference_count: number }[] }).model_stats[0]!;
    expect(before).toMatchObject({ name: "identity_int8", version: "1", inference_count: 0, execution_count: 0, last_inference: 0 });
    const body = JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "INT8", shape: [2, 2], data: [1, 2, 3, 4] }] });
    for (let i = 0; i < 2; i++) await fetch(`${server.httpUrl}/v2/models/identity_int8/infer`, { method: "POST", body });
    const stats = ((await (await get("/v2/models/identity_int8/versions/1/stats")).json()) as { model_stats: Record<string, unknown>[] }).model_stats;
    expect(stats).toHaveLength(1);
    expect(stats[0]).toMatchObject({
      inference_count: 4, execution_count: 2, last_inference: expect.any(Number),
      inference_stats: {
        success: { count: 2, ns: expect.any(Number) }, fail: { count: 0, ns: 0 }, queue: { count: 2 },
        compute_input: { count: 2 }, compute_infer: { count: 2 }, compute_output: { count: 2 },
      },
      batch_stats: [{ batch_size: 2, compute_infer: { count: 2 } }],
    });
    const all = (await (await get("/v2/models/stats")).json()) as { model_stats: { name: string }[] };
    expect(all.model_stats.map((s) => s.name)).toEqual(expect.arrayContaining(["simple", "resnet50", "identity_int8"]));
  });

  it("lists the repository, with a ready filter", async () => {
    const index = (await (await fetch(`${server.httpUrl}/v2/repository/index`, { method: "POST" })).json()) as { name: string; state: string }[];
    expect(index.map((e) => e.name)).toEqual(expect.arrayContaining(["simple", "resnet50", "mlp", "identity_bf16"]));
    expect(index.every((e) => e.state === "READY")).toBe(true);
    expect(index.find((e) => e.name === "simple")).toEqual({ name: "simple", version: "1", state: "READY", reason: "" });
  });

  it("drains in-flight requests on SIGTERM, then exits 0", async () => {
    const own = await startServer();
    const inflight = fetch(`${own.httpUrl}/v2/models/resnet50/infer`, {
      method: "POST",
      body: JSON.stringify({ inputs: [{ name: "input", datatype: "FP32", shape: [1, 3, 224, 224], data: Array(3 * 224 * 224).fill(0.5) }] }),
    });
    await new Promise((r) => setTimeout(r, 100));
    const exit = own.stop();
    const response = await inflight;
    expect(response.status).toBe(200);
    const code = await exit;
    if (code !== 0) console.log("SERVER LOGS", own.logs().slice(-3000));
    expect(code).toBe(0);
  });
});

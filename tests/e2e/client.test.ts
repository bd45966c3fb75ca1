import { readFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import path from "node:path";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  InferenceClient, InferenceServerError, InvalidArgumentError, NotFoundError, RequestTimeoutError, ServerUnreachableError,
  type TensorFormat, UnsupportedError,
} from "../../client/index";
import { EXAMPLE_REPOSITORY, type RunningServer, startServer } from "../helpers/server-process";

const MODELS = ["simple", "identity_int64", "identity_bytes", "identity_bool", "identity_fp16", "identity_fp32"];

let server: RunningServer;
let client: InferenceClient;
const clients: Partial<Record<"http" | "grpc", InferenceClient>> = {};

beforeAll(async () => {
  server = await startServer({
    services: ["http", "grpc"],
    args: ["--model-control-mode", "explicit", ...MODELS.flatMap((model) => ["--load-model", model])],
  });
  client = new InferenceClient({ url: server.httpUrl });
  clients.http = client;
  clients.grpc = new InferenceClient({ url: `grpc://${server.grpcAddress}` });
});

afterAll(async () => {
  await Promise.all(Object.values(clients).map((each) => each.close()));
  await server?.stop();
});

const simpleInputs = [
  { name: "INPUT0", shape: [1, 16], data: Int32Array.from({ length: 16 }, (_, i) => i) },
  { name: "INPUT1", shape: [1, 16], data: new Int32Array(16).fill(3) },
];

describe.each(["http", "grpc"] as const)("InferenceClient over %s: health, metadata, config, statistics, repository", (protocol) => {
  let client: InferenceClient;
  beforeAll(() => {
    client = clients[protocol]!;
  });

  it("reports the server live and ready, with its extensions", async () => {
    expect(await client.isServerLive()).toBe(true);
    expect(await client.isServerReady()).toBe(true);
    const metadata = await client.serverMetadata();
    expect(metadata.extensions).toEqual(expect.arrayContaining(["binary_tensor_data", "statistics", "model_repository"]));
  });

  it("describes a model: metadata with the batch dimension, config, readiness", async () => {
    const metadata = await client.modelMetadata("simple");
    expect(metadata.inputs).toEqual([
      { name: "INPUT0", datatype: "INT32", shape: [-1, 16] },
      { name: "INPUT1", datatype: "INT32", shape: [-1, 16] },
    ]);
    expect((await client.modelMetadata("simple", { version: "1" })).versions).toEqual(["1"]);
    const config = await client.modelConfig("simple");
    expect(config.max_batch_size).toBe(8);
    expect(config.input.map((input) => input.name)).toEqual(["INPUT0", "INPUT1"]);
    expect(await client.isModelReady("simple")).toBe(true);
    expect(await client.isModelReady("no_such_model")).toBe(false);
  });

  it("reads statistics that count the inferences it made, per model and for all models", async () => {
    const before = (await client.modelStatistics("simple"))[0]!;
    await client.infer("simple", simpleInputs);
    await client.infer("simple", simpleInputs);
    const after = (await client.modelStatistics("simple", { version: "1" }))[0]!;
    expect(after.inference_stats.success.count - before.inference_stats.success.count).toBe(2);
    expect(after.inference_count - before.inference_count).toBe(2);
    expect(after.inference_stats.compute_infer.ns).toBeGreaterThan(before.inference_stats.compute_infer.ns);
    expect((await client.modelStatistics()).map((entry) => entry.name)).toEqual(expect.arrayContaining(MODELS));
  });

  it("lists the repository and unloads and reloads a model", async () => {
    const index = await client.repositoryIndex();
    expect(index.find((entry) => entry.name === "simple")).toMatchObject({ state: "READY", version: "1" });
    expect(index.find((entry) => entry.name === "mlp")?.state).not.toBe("READY");
    expect((await client.repositoryIndex({ readyOnly: true })).every((entry) => entry.state === "READY")).toBe(true);
    await client.unloadModel("identity_fp32");
    expect(await client.isModelReady("identity_fp32")).toBe(false);
    await client.loadModel("identity_fp32");
    expect(await client.isModelReady("identity_fp32")).toBe(true);
  });

  it("loads a model from a changed config and from files it sends, as tritonclient's load_model", async () => {
    const shipped = await client.modelConfig("identity_fp32");
    await client.loadModel("identity_fp32", { config: { ...shipped, max_batch_size: 4 } });
    expect((await client.modelConfig("identity_fp32")).max_batch_size).toBe(4);
    await expect(client.infer("identity_fp32", [{ name: "INPUT0", datatype: "FP32", shape: [5, 1], data: new Float32Array(5) }]))
      .rejects.toThrow(InvalidArgumentError);
    await client.loadModel("identity_fp32");
    expect((await client.modelConfig("identity_fp32")).max_batch_size).toBe(shipped.max_batch_size);

    // A model that is in no repository: its config as text and its ONNX file, sent with the request.
    const name = `sent_simple_${protocol}`;
    const config = JSON.stringify({ ...(await client.modelConfig("simple")), name });
    await client.loadModel(name, { config, files: { "1/model.onnx": readFileSync(path.join(EXAMPLE_REPOSITORY, "simple", "1", "model.onnx")) } });
    const result = await client.infer(name, simpleInputs);
    expect([...result.data("OUTPUT0", "INT32")]).toEqual(Array.from({ length: 16 }, (_, i) => i + 3));
    await client.unloadModel(name);
    expect(await client.isModelReady(name)).toBe(false);
  });

  it("reads and changes the log settings, as tritonclient's get_log_settings/update_log_settings", async () => {
    const defaults = { log_file: "", log_info: true, log_warning: true, log_error: true, log_verbose_level: 0, log_format: "default" };
    expect(await client.getLogSettings()).toEqual(defaults);
    try {
      const changed = { ...defaults, log_warning: false, log_verbose_level: 1, log_format: "ISO8601" };
      expect(await client.updateLogSettings({ log_warning: false, log_verbose_level: 1, log_format: "ISO8601" })).toEqual(changed);
      expect(await client.getLogSettings()).toEqual(changed);
      await expect(client.updateLogSettings({ log_format: "json" })).rejects.toThrow(InvalidArgumentError);
      // Triton answers a new log file 400 over REST and UNIMPLEMENTED over gRPC.
      await expect(client.updateLogSettings({ log_file: "/tmp/server.log" }))
        .rejects.toThrow(protocol === "http" ? InvalidArgumentError : UnsupportedError);
      expect(await client.getLogSettings()).toEqual(changed);
    } finally {
      await client.updateLogSettings({ log_warning: true, log_verbose_level: 0, log_format: "default" });
    }
  });
});

describe.each<["http" | "grpc", TensorFormat, TensorFormat]>([
  ["http", "binary", "binary"], ["http", "json", "json"], ["http", "json", "binary"], ["http", "binary", "json"], ["grpc", "binary", "binary"],
])(
  "inference over %s with %s inputs and %s outputs", (protocol, inputFormat, outputFormat) => {
    const options = { inputFormat, outputFormat };
    let client: InferenceClient;
    beforeAll(() => {
      client = clients[protocol]!;
    });

    it("adds and subtracts with simple, outputs as typed arrays", async () => {
      const result = await client.infer("simple", simpleInputs, { ...options, id: "req-7" });
      expect(result.id).toBe("req-7");
      expect(result.modelName).toBe("simple");
      expect(result.modelVersion).toBe("1");
      expect(result.output("OUTPUT0").shape).toEqual([1, 16]);
      expect([...result.data("OUTPUT0", "INT32")]).toEqual(Array.from({ length: 16 }, (_, i) => i + 3));
      expect([...result.data("OUTPUT1", "INT32")]).toEqual(Array.from({ length: 16 }, (_, i) => i - 3));
    });

    it("keeps 64-bit integers exact, BYTES as bytes, BOOL and FP16 bit patterns", async () => {
      const int64 = await client.infer("identity_int64", [{ name: "INPUT0", shape: [1, 3], datatype: "INT64", data: [9007199254740993n, -9223372036854775808n, 1n] }], options);
      expect([...int64.data("OUTPUT0", "INT64")]).toEqual([9007199254740993n, -9223372036854775808n, 1n]);
      const bytes = await client.infer("identity_bytes", [{ name: "INPUT0", shape: [1, 2], data: ["héllo", ""] }], options);
      expect(bytes.strings("OUTPUT0")).toEqual(["héllo", ""]);
      const bool = await client.infer("identity_bool", [{ name: "INPUT0", shape: [1, 3], data: [true, false, true] }], options);
      expect([...bool.data("OUTPUT0", "BOOL")]).toEqual([1, 0, 1]);
      // FP16 has no JSON form: the client sends it binary whatever was asked and asks for it back binary.
      const half = await client.infer("identity_fp16", [{ name: "INPUT0", shape: [1, 2], datatype: "FP16", data: new Uint16Array([0x3c00, 0xc000]) }],
        { ...options, outputs: [{ name: "OUTPUT0", format: "binary" }] });
      expect([...half.data("OUTPUT0", "FP16")]).toEqual([0x3c00, 0xc000]);
    });

    it("returns only the outputs asked for, and classification results as strings", async () => {
      const result = await client.infer("simple", simpleInputs, { ...options, outputs: ["OUTPUT1", { name: "OUTPUT0", classification: 2 }] });
      expect(result.outputs.map((output) => output.name)).toEqual(["OUTPUT1", "OUTPUT0"]);
      expect(result.strings("OUTPUT0")).toEqual(["18:15", "17:14"]);
    });
  },
);

describe("InferenceClient request options", () => {
  it("prepares a request once and sends it many times, concurrently", async () => {
    const prepared = client.prepareInfer("simple", simpleInputs);
    const results = await Promise.all(Array.from({ length: 5 }, () => client.inferPrepared(prepared)));
    for (const result of results) expect(result.data("OUTPUT0", "INT32")[15]).toBe(18);
    expect(results.filter((result) => result.timing.sendNs > 0)).toHaveLength(1);
  });

  it("compresses requests and accepts compressed responses", async () => {
    const gzip = new InferenceClient({ url: server.httpUrl, compression: "gzip" });
    try {
      const result = await gzip.infer("simple", simpleInputs, { inputFormat: "json", outputFormat: "json" });
      expect([...result.data("OUTPUT0", "INT32")].slice(0, 3)).toEqual([3, 4, 5]);
    } finally {
      await gzip.close();
    }
  });

  it("checks inputs before sending anything", () => {
    expect(() => client.prepareInfer("simple", [{ name: "INPUT0", shape: [1, 16], data: new Int32Array(15) }]))
      .toThrow(/shape \[1,16\] holds 16 elements, the data has 15/);
    expect(() => client.prepareInfer("simple", [{ name: "INPUT0", shape: [1], data: [1] }])).toThrow(/give a datatype/);
  });

  it("names the datatype mismatch when FP32 data is sent to an FP16 input", () => {
    const fp32Bytes = new Uint16Array(new Float32Array([1, 2]).buffer);
    expect(() => client.prepareInfer("identity_fp16", [{ name: "INPUT0", shape: [1, 2], datatype: "FP16", data: fp32Bytes }]))
      .toThrow(/holds 2 elements, the data has 4: that is the byte size of 2 FP32 elements - a datatype mismatch\? The input is FP16/);
    expect(() => client.prepareInfer("identity_fp16", [{ name: "INPUT0", shape: [1, 2], datatype: "FP16", data: new Float32Array([1, 2]) }]))
      .toThrow(/a Float32Array cannot carry FP16 data/);
  });
});

describe("InferenceClient errors", () => {
  it("maps gRPC status codes to the same typed exceptions", async () => {
    const grpc = clients.grpc!;
    await expect(grpc.modelMetadata("no_such_model")).rejects.toMatchObject({ name: "NotFoundError", code: "NOT_FOUND", message: expect.stringContaining("no_such_model") });
    const badInput = await grpc.infer("simple", [{ ...simpleInputs[0]!, name: "NOPE" }, simpleInputs[1]!]).catch((error: unknown) => error);
    expect(badInput).toBeInstanceOf(InvalidArgumentError);
    // The status Triton's HTTP endpoint gives the same error, so checks written against HTTP hold over gRPC.
    expect(badInput).toMatchObject({ code: "INVALID_ARG", httpStatus: 400 });
    const calls: ((on: InferenceClient) => Promise<unknown>)[] = [
      (on) => on.modelMetadata("no_such_model"),
      (on) => on.infer("no_such_model", simpleInputs),
      (on) => on.loadModel("no_such_model"),
      (on) => on.modelConfig("simple", { version: "7" }),
    ];
    for (const call of calls) {
      const [overHttp, overGrpc] = await Promise.all([call(client).catch((e: unknown) => e), call(grpc).catch((e: unknown) => e)]);
      expect(overHttp).toBeInstanceOf(InferenceServerError);
      expect(overGrpc).toMatchObject({ name: (overHttp as InferenceServerError).name, code: (overHttp as InferenceServerError).code, httpStatus: (overHttp as InferenceServerError).httpStatus });
    }
  });

  it("maps the server's errors to typed exceptions with Triton's code and the HTTP status", async () => {
    const unknown = await client.modelMetadata("no_such_model").catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(NotFoundError);
    expect(unknown).toMatchObject({ code: "NOT_FOUND", httpStatus: 404, message: expect.stringContaining("no_such_model") });
    await expect(client.infer("no_such_model", simpleInputs)).rejects.toBeInstanceOf(NotFoundError);

    const badInput = await client.infer("simple", [{ ...simpleInputs[0]!, name: "NOPE" }, simpleInputs[1]!]).catch((error: unknown) => error);
    expect(badInput).toBeInstanceOf(InvalidArgumentError);
    expect(badInput).toMatchObject({ code: "INVALID_ARG", httpStatus: 400 });

    const sharedMemory = await client.infer("simple", [{ ...simpleInputs[0]!, parameters: { shared_memory_region: "r", shared_memory_byte_size: 64 } }, simpleInputs[1]!])
      .catch((error: unknown) => error);
    expect(sharedMemory).toBeInstanceOf(InvalidArgumentError);
    expect(sharedMemory).toMatchObject({ code: "INVALID_ARG", httpStatus: 400, message: expect.stringContaining("unexpected 'binary_data_size' provided when using shared memory") });
    expect(sharedMemory).toBeInstanceOf(InferenceServerError);
  });

  it("says when the server cannot be reached", async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    for (const url of [`http://127.0.0.1:${port}`, `grpc://127.0.0.1:${port}`]) {
      const nowhere = new InferenceClient({ url });
      const error = await nowhere.isServerLive().catch((caught: unknown) => caught);
      await nowhere.close();
      expect(error).toBeInstanceOf(ServerUnreachableError);
      expect(error).toMatchObject({ code: "UNAVAILABLE", reason: "ECONNREFUSED" });
    }
  });

  it("gives up after timeoutMs on a server that never answers", async () => {
    const sockets: Socket[] = [];
    const silent: Server = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const mute = new InferenceClient({ url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, timeoutMs: 200 });
    try {
      await expect(mute.serverMetadata()).rejects.toBeInstanceOf(RequestTimeoutError);
    } finally {
      for (const socket of sockets) socket.destroy();
      await mute.close();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

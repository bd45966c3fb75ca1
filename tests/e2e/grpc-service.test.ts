import path from "node:path";
import { status } from "@grpc/grpc-js";
import { Root } from "protobufjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../helpers/server-process";
import {
  caseOutputs, GrpcCallError, grpcCallError as callError, type GrpcMessage, GrpcTestClient, modelInferRequest, PROTO_DIRECTORY, streamResponses,
} from "./grpc-transport";
import type { CaseRequest } from "./protocol-transport";

const range = (n: number, f: (i: number) => number = (i) => i): number[] => Array.from({ length: n }, (_, i) => f(i));

const SIMPLE: CaseRequest = {
  model: "simple",
  inputs: [
    { name: "INPUT0", datatype: "INT32", shape: [1, 16], values: range(16) },
    { name: "INPUT1", datatype: "INT32", shape: [1, 16], values: range(16, () => 1) },
  ],
};
const SUMS = range(16, (i) => i + 1);
const DIFFERENCES = range(16, (i) => i - 1);
const MAX_MESSAGE_BYTES = 1 << 20;

describe("KServe v2 gRPC: every GRPCInferenceService RPC", () => {
  let server: RunningServer;
  let client: GrpcTestClient;
  beforeAll(async () => {
    server = await startServer({ services: ["http", "grpc"], args: ["--grpc-max-message-size", String(MAX_MESSAGE_BYTES)] });
    client = new GrpcTestClient(server.grpcAddress!, { "grpc.max_send_message_length": 8 * MAX_MESSAGE_BYTES });
  });
  afterAll(async () => {
    client?.close();
    await server?.stop();
  });

  const rest = async (route: string): Promise<unknown> => (await fetch(`${server.httpUrl}${route}`)).json();

  it("ServerLive and ServerReady answer true", async () => {
    expect(await client.unary("ServerLive", {})).toEqual({ live: true });
    expect(await client.unary("ServerReady", {})).toEqual({ ready: true });
  });

  it("grpc.health.v1.Health/Check answers SERVING while the server is ready", async () => {
    expect(await client.unary("Check", { service: "" })).toEqual({ status: "SERVING" });
    expect(await client.unary("Check", { service: "inference.GRPCInferenceService" })).toEqual({ status: "SERVING" });
  });

  it("ModelReady is true for a loaded version and false for unknown models and versions", async () => {
    expect(await client.unary("ModelReady", { name: "simple" })).toEqual({ ready: true });
    expect(await client.unary("ModelReady", { name: "simple", version: "1" })).toEqual({ ready: true });
    expect(await client.unary("ModelReady", { name: "simple", version: "7" })).toEqual({ ready: false });
    expect(await client.unary("ModelReady", { name: "no_such_model" })).toEqual({ ready: false });
  });

  it("ServerMetadata matches GET /v2", async () => {
    expect(await client.unary("ServerMetadata", {})).toEqual(await rest("/v2"));
  });

  it("ModelMetadata matches GET /v2/models/simple, shapes as int64", async () => {
    const metadata = await client.unary<{ inputs: { shape: string[] }[]; outputs: { shape: string[] }[] }>("ModelMetadata", { name: "simple" });
    expect(metadata.inputs[0]!.shape).toEqual(["-1", "16"]);
    const numeric = (tensors: { shape: string[] }[]): unknown => tensors.map((t) => ({ ...t, shape: t.shape.map(Number) }));
    expect({ ...metadata, inputs: numeric(metadata.inputs), outputs: numeric(metadata.outputs) }).toEqual(await rest("/v2/models/simple"));
    expect((await callError(client.unary("ModelMetadata", { name: "no_such_model" }))).code).toBe(status.NOT_FOUND);
  });

  it("ModelConfig returns inference.ModelConfig equal to GET /v2/models/simple/config", async () => {
    const { config } = await client.unary<{ config: Record<string, unknown> }>("ModelConfig", { name: "simple" });
    expect(config).toMatchObject({ name: "simple", platform: "onnxruntime_onnx", max_batch_size: 8 });
    expect(config["input"]).toEqual(expect.arrayContaining([expect.objectContaining({ name: "INPUT0", data_type: "TYPE_INT32", dims: ["16"] })]));
    // REST prints some int64 as numbers and others as strings (as Triton does); decode both through the schema.
    const root = new Root().loadSync(path.join(PROTO_DIRECTORY, "model_config.proto"), { keepCase: true });
    const modelConfig = root.lookupType("inference.ModelConfig");
    const normalize = (json: unknown): unknown =>
      modelConfig.toObject(modelConfig.fromObject(json as Record<string, unknown>), { longs: String, enums: String, defaults: true });
    expect(normalize(config)).toEqual(normalize(await rest("/v2/models/simple/config")));
    expect((await callError(client.unary("ModelConfig", { name: "simple", version: "9" }))).code).toBe(status.NOT_FOUND);
  });

  it("ModelStatistics counts an inference, for one model and for all", async () => {
    const before = await client.unary<{ model_stats: { inference_count: string }[] }>("ModelStatistics", { name: "simple" });
    await client.unary("ModelInfer", modelInferRequest(SIMPLE, true));
    const after = await client.unary<{ model_stats: { name: string; version: string; inference_count: string; inference_stats: { success: { count: string } } }[] }>(
      "ModelStatistics", { name: "simple", version: "1" });
    expect(after.model_stats).toHaveLength(1);
    expect(after.model_stats[0]).toMatchObject({ name: "simple", version: "1" });
    expect(Number(after.model_stats[0]!.inference_count)).toBe(Number(before.model_stats[0]!.inference_count) + 1);
    expect(Number(after.model_stats[0]!.inference_stats.success.count)).toBeGreaterThan(0);
    const all = await client.unary<{ model_stats: { name: string }[] }>("ModelStatistics", {});
    expect(all.model_stats.map((s) => s.name)).toEqual(expect.arrayContaining(["simple", "resnet50", "identity_fp32"]));
    expect((await callError(client.unary("ModelStatistics", { name: "no_such_model" }))).code).toBe(status.NOT_FOUND);
  });

  it("RepositoryIndex lists every model version with its state", async () => {
    const index = await client.unary<{ models: unknown[] }>("RepositoryIndex", { repository_name: "", ready: true });
    expect(index.models).toContainEqual({ name: "simple", version: "1", state: "READY", reason: "" });
    expect(index.models).toEqual(await (await fetch(`${server.httpUrl}/v2/repository/index`, { method: "POST", body: '{"ready":true}' })).json());
  });

  it("RepositoryModelLoad/Unload are refused outside explicit model control with Triton's status and message", async () => {
    const refused = { code: status.UNAVAILABLE, details: "explicit model load / unload is not allowed if polling is enabled" };
    expect(await callError(client.unary("RepositoryModelLoad", { model_name: "simple" }))).toMatchObject(refused);
    expect(await callError(client.unary("RepositoryModelUnload", { model_name: "simple" }))).toMatchObject(refused);
    const override = await callError(client.unary("RepositoryModelLoad", { model_name: "simple", parameters: { config: { string_param: "{}" } } }));
    expect(override).toMatchObject(refused);
    expect(await client.unary("ModelReady", { name: "simple" })).toEqual({ ready: true });
  });

  it("ModelInfer echoes id and version and answers typed requests in raw_output_contents", async () => {
    const response = await client.unary<GrpcMessage & { outputs: { contents: unknown }[] }>("ModelInfer", { ...modelInferRequest(SIMPLE, false), id: "req-42" });
    expect(response).toMatchObject({ model_name: "simple", model_version: "1", id: "req-42" });
    expect(response.outputs.map((o) => o.contents)).toEqual([null, null]);
    expect(caseOutputs(response).map((o) => o.values)).toEqual([SUMS, DIFFERENCES]);
  });

  it("refuses a request that mixes raw_input_contents and typed contents", async () => {
    const typed = modelInferRequest(SIMPLE, false) as { inputs: GrpcMessage[] };
    const raw = modelInferRequest(SIMPLE, true) as { inputs: GrpcMessage[]; raw_input_contents: Buffer[] };
    const mixed = { ...raw, inputs: [typed.inputs[0], raw.inputs[1]], raw_input_contents: raw.raw_input_contents.slice(1) };
    const error = await callError(client.unary("ModelInfer", mixed));
    expect(error.code).toBe(status.INVALID_ARGUMENT);
    expect(error.details).toMatch(/contents field must not be specified when using raw_input_contents for 'INPUT0'/);
  });

  it("refuses typed contents in a field that does not match the datatype, or out of the datatype's range", async () => {
    const input = (contents: GrpcMessage, datatype = "INT8"): GrpcMessage => ({
      model_name: "identity_int8", inputs: [{ name: "INPUT0", datatype, shape: [1, 3], contents }],
    });
    const wrongField = await callError(client.unary("ModelInfer", input({ fp32_contents: [1, 2, 3] })));
    expect(wrongField.code).toBe(status.INVALID_ARGUMENT);
    expect(wrongField.details).toMatch(/unexpected explicit tensor data for input tensor 'INPUT0' for model 'identity_int8' of type 'FP32', expected datatype 'INT8'/);
    const twoFields = await callError(client.unary("ModelInfer", input({ int_contents: [1, 2, 3], bytes_contents: [Buffer.from("x")] })));
    expect(twoFields.details).toMatch(/binary data was already supplied/);
    const outOfRange = await callError(client.unary("ModelInfer", input({ int_contents: [1, 300, 3] })));
    expect(outOfRange.details).toMatch(/value 300 .* is out of range for INT8/);
    expect(caseOutputs(await client.unary("ModelInfer", input({ int_contents: [-128, 0, 127] })))[0]!.values).toEqual([-128, 0, 127]);
  });

  it("checks parameter types as Triton does", async () => {
    const timeout = await callError(client.unary("ModelInfer", { ...modelInferRequest(SIMPLE, true), parameters: { timeout: { double_param: 1.5 } } }));
    expect(timeout.code).toBe(status.INVALID_ARGUMENT);
    expect(timeout.details).toMatch(/invalid value type for 'timeout' parameter, expected int64_param/);
    const request = modelInferRequest({ ...SIMPLE, outputs: [{ name: "OUTPUT0" }] }, true) as { outputs: GrpcMessage[] };
    const classification = await callError(client.unary("ModelInfer", {
      ...request, outputs: [{ name: "OUTPUT0", parameters: { classification: { string_param: "2" } } }],
    }));
    expect(classification.details).toMatch(/'classification' parameter, expected int64_param/);
  });

  it("answers RESOURCE_EXHAUSTED for a request over --grpc-max-message-size, and keeps serving", async () => {
    const elements = MAX_MESSAGE_BYTES / 4 + 16;
    const big: CaseRequest = { model: "identity_fp32", inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, elements], values: range(elements) }] };
    const error = await callError(client.unary("ModelInfer", modelInferRequest(big, true)));
    expect(error.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(caseOutputs(await client.unary("ModelInfer", modelInferRequest(SIMPLE, true)))[0]!.values).toEqual(SUMS);
  });

  it("echoes at most 256 characters of a client's string in an error, and the connection keeps serving", async () => {
    const name = "a".repeat(20000);
    const calls = [
      callError(client.unary("ModelInfer", { ...modelInferRequest(SIMPLE, true), model_name: name })),
      callError(client.unary("ModelMetadata", { name })),
      callError(client.unary("ModelInfer", { ...modelInferRequest(SIMPLE, true), parameters: { ["é".repeat(20000)]: {} } })),
    ];
    // Valid calls on the same channel (one HTTP/2 connection) while the errors are answered, and after.
    const valid = range(32).map(() => client.unary("ModelInfer", modelInferRequest(SIMPLE, true)));
    const [unknown, metadata, parameter] = await Promise.all(calls);
    expect([unknown!.code, unknown!.details]).toEqual([status.NOT_FOUND, `Request for unknown model: '${"a".repeat(256)}…(20000 chars)' is not found`]);
    expect(metadata!.details).toBe(`Request for unknown model: '${"a".repeat(256)}…(20000 chars)' is not found`);
    expect([parameter!.code, parameter!.details]).toEqual([status.INVALID_ARGUMENT, expect.stringContaining(`parameter '${"é".repeat(256)}…(20000 chars)' has no value`)]);
    for (const response of await Promise.all(valid)) expect(caseOutputs(response)[0]!.values).toEqual(SUMS);
    expect(caseOutputs(await client.unary("ModelInfer", modelInferRequest(SIMPLE, true)))[0]!.values).toEqual(SUMS);
  });

  it("lists no CUDA shared-memory region, and refuses register and unregister while client shared memory is off (the default)", async () => {
    expect(await client.unary("CudaSharedMemoryStatus", {})).toEqual({ regions: {} });
    const disabled = "Client shared memory is disabled. Start the server with '--allow-client-shm=true' to enable.";
    for (const [rpc, request] of [["CudaSharedMemoryUnregister", {}], ["CudaSharedMemoryRegister", { name: "r", raw_handle: Buffer.alloc(64), device_id: 0, byte_size: 64 }], ["SystemSharedMemoryUnregister", {}]] as const) {
      const refused = await callError(client.unary(rpc, request));
      expect([refused.code, refused.details], rpc).toEqual([status.UNIMPLEMENTED, disabled]);
    }
  });

  it("ModelStreamInfer answers every request in order, a failed one in error_message with its id", async () => {
    const requests = [
      { ...modelInferRequest(SIMPLE, true), id: "first" },
      { ...modelInferRequest({ ...SIMPLE, model: "no_such_model" }, true), id: "second" },
      { ...modelInferRequest(SIMPLE, false), id: "third" },
      ...Array.from({ length: 8 }, (_, i) => ({
        ...modelInferRequest({ model: "resnet50", inputs: [{ name: "input", datatype: "FP32", shape: [1, 3, 224, 224], values: range(3 * 224 * 224, () => i) }] }, true),
        id: `resnet-${i}`,
      })),
      { ...modelInferRequest(SIMPLE, true), id: "last" },
    ];
    const responses = await streamResponses(client.modelStreamInfer(), requests) as { error_message: string; infer_response: GrpcMessage & { id: string } }[];
    expect(responses.map((r) => r.infer_response.id)).toEqual(requests.map((r) => r.id));
    expect(responses[1]!.error_message).toMatch(/unknown model: 'no_such_model'/);
    expect(responses.filter((r) => r.error_message !== "")).toHaveLength(1);
    expect(caseOutputs(responses[0]!.infer_response).map((o) => o.values)).toEqual([SUMS, DIFFERENCES]);
    expect(caseOutputs(responses[2]!.infer_response).map((o) => o.values)).toEqual([SUMS, DIFFERENCES]);
    expect(caseOutputs(responses[3]!.infer_response)[0]!.shape).toEqual([1, 1000]);
  });

  it("ModelStreamInfer marks every response triton_final_response, as Triton does for a model that is not decoupled", async () => {
    const requests = [
      { ...modelInferRequest(SIMPLE, true), id: "plain" },
      { ...modelInferRequest(SIMPLE, true), id: "asks-for-empty-final", parameters: { triton_enable_empty_final_response: { bool_param: true } } },
      { ...modelInferRequest({ ...SIMPLE, model: "no_such_model" }, true), id: "unknown-model" },
    ];
    type StreamResponse = { error_message: string; infer_response: GrpcMessage & { id: string; parameters: Record<string, GrpcMessage> } };
    const responses = await streamResponses(client.modelStreamInfer(), requests) as StreamResponse[];
    // One response per request: Triton sends an empty final response only for decoupled models, which send the
    // final flag apart from their last response; a one-to-one model's response is itself the final one.
    expect(responses.map((r) => r.infer_response.id)).toEqual(["plain", "asks-for-empty-final", "unknown-model"]);
    for (const response of responses.slice(0, 2)) {
      expect(response.error_message).toBe("");
      expect(response.infer_response).toMatchObject({ model_name: "simple", model_version: "1" });
      expect(response.infer_response.parameters).toEqual({ triton_final_response: { bool_param: true, parameter_choice: "bool_param" } });
      expect(caseOutputs(response.infer_response).map((o) => o.values)).toEqual([SUMS, DIFFERENCES]);
    }
    // A request refused before it runs is answered as Triton's EnqueueErrorResponse does: the message and the id.
    expect(responses[2]!.error_message).toMatch(/unknown model: 'no_such_model'/);
    expect(responses[2]!.infer_response).toMatchObject({ id: "unknown-model", model_name: "", parameters: {} });
    const wrongType = await callError(client.unary("ModelInfer", {
      ...modelInferRequest(SIMPLE, true), parameters: { triton_enable_empty_final_response: { string_param: "true" } },
    }));
    expect(wrongType).toMatchObject({
      code: status.INVALID_ARGUMENT, details: "invalid value type for 'triton_enable_empty_final_response' parameter, expected bool_param.",
    });
  });

  it("ModelStreamInfer with triton_grpc_error: true ends the stream with the first error's status", async () => {
    const requests = [modelInferRequest(SIMPLE, true), modelInferRequest({ ...SIMPLE, model: "no_such_model" }, true), modelInferRequest(SIMPLE, true)];
    const error = await streamResponses(client.modelStreamInfer({ triton_grpc_error: "true" }), requests).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(GrpcCallError);
    expect(error).toMatchObject({ code: status.NOT_FOUND, details: expect.stringMatching(/no_such_model/) });
  });
});

describe("KServe v2 gRPC: shutdown", () => {
  it("on SIGTERM ends an open ModelStreamInfer after its owed responses and exits 0", async () => {
    const server = await startServer({ services: ["http", "grpc"] });
    const client = new GrpcTestClient(server.grpcAddress!);
    try {
      const stream = client.modelStreamInfer();
      const responses: GrpcMessage[] = [];
      const ended = new Promise<void>((resolve, reject) => {
        stream.on("data", (response: GrpcMessage) => responses.push(response));
        stream.on("error", reject);
        stream.on("end", resolve);
      });
      stream.write(modelInferRequest(SIMPLE, true));
      await new Promise<void>((resolve) => stream.once("data", () => resolve()));
      stream.write(modelInferRequest(SIMPLE, true));
      // The client never half-closes: the server must end the stream itself to exit.
      expect(await server.stop()).toBe(0);
      await ended;
      expect(responses.length).toBeGreaterThanOrEqual(1);
    } finally {
      client.close();
      await server.stop();
    }
  });
});

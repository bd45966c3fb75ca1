import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { status } from "@grpc/grpc-js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../helpers/server-process";
import { grpcCallError, type GrpcMessage, GrpcTestClient } from "./grpc-transport";

const MAX_REGIONS = 4;
const range = (n: number, f: (i: number) => number): number[] => Array.from({ length: n }, (_, i) => f(i));
const INPUT0 = range(16, (i) => i);
const INPUT1 = range(16, () => 3);
const SUMS = INPUT0.map((v, i) => v + INPUT1[i]!);
const DIFFERENCES = INPUT0.map((v, i) => v - INPUT1[i]!);
const int32Bytes = (values: readonly number[]): Buffer => Buffer.from(new Int32Array(values).buffer);
const int32Values = (bytes: Buffer): number[] => [...new Int32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength))];

/** Regions made as tritonclient's create_shared_memory_region does: shm_open(key) is /dev/shm/<key>, sized by ftruncate. */
const created: string[] = [];
function createRegion(byteSize: number, content?: Buffer, at = 0): string {
  const key = `/itest-shm-${process.pid}-${created.length}`;
  const file = `/dev/shm${key}`;
  created.push(file);
  writeFileSync(file, Buffer.alloc(0));
  truncateSync(file, byteSize);
  if (content !== undefined) {
    const bytes = readFileSync(file);
    content.copy(bytes, at);
    writeFileSync(file, bytes);
  }
  return key;
}
const regionBytes = (key: string, offset: number, byteSize: number): Buffer => readFileSync(`/dev/shm${key}`).subarray(offset, offset + byteSize);

/** One region holding both inputs (INPUT0 at 0, INPUT1 at 64) and one of 128 bytes for both outputs. */
function simpleRegions(): { inputKey: string; outputKey: string } {
  return { inputKey: createRegion(128, Buffer.concat([int32Bytes(INPUT0), int32Bytes(INPUT1)])), outputKey: createRegion(128) };
}

describe("system shared memory extension", () => {
  let server: RunningServer;
  let grpc: GrpcTestClient;
  beforeAll(async () => {
    server = await startServer({ services: ["http", "grpc"], args: ["--allow-client-shm", "true", "--max-shared-memory-regions", String(MAX_REGIONS), "--max-shared-memory-input-bytes", "128"] });
    grpc = new GrpcTestClient(server.grpcAddress!);
  });
  afterEach(async () => {
    await fetch(`${server.httpUrl}/v2/systemsharedmemory/unregister`, { method: "POST" });
  });
  afterAll(async () => {
    grpc?.close();
    await server?.stop();
    for (const file of created) rmSync(file, { force: true, recursive: true });
  });

  const post = (path: string, body?: unknown): Promise<Response> =>
    fetch(`${server.httpUrl}${path}`, { method: "POST", body: body === undefined ? undefined : JSON.stringify(body) });
  const register = (name: string, key: string, byteSize: number, offset = 0): Promise<Response> =>
    post(`/v2/systemsharedmemory/region/${name}/register`, { key, offset, byte_size: byteSize });
  const regionStatus = async (path = "/v2/systemsharedmemory/status"): Promise<unknown> => (await fetch(`${server.httpUrl}${path}`)).json();
  const expectError = async (response: Response | Promise<Response>, code: number, message: string | RegExp): Promise<void> => {
    const answer = await response;
    expect(answer.status).toBe(code);
    const { error } = (await answer.json()) as { error: string };
    if (typeof message === "string") expect(error).toBe(message);
    else expect(error).toMatch(message);
  };
  const infer = (body: unknown, binary?: Buffer): Promise<Response> => {
    const header = Buffer.from(JSON.stringify(body));
    return fetch(`${server.httpUrl}/v2/models/simple/infer`, {
      method: "POST",
      body: binary === undefined ? header : Buffer.concat([header, binary]),
      headers: binary === undefined ? {} : { "Inference-Header-Content-Length": String(header.byteLength) },
    });
  };
  const shmInput = (name: string, region: string, offset: number, byteSize = 64): object =>
    ({ name, datatype: "INT32", shape: [1, 16], parameters: { shared_memory_region: region, shared_memory_byte_size: byteSize, shared_memory_offset: offset } });
  const shmOutput = (name: string, region: string, offset: number, byteSize = 64): object =>
    ({ name, parameters: { shared_memory_region: region, shared_memory_byte_size: byteSize, shared_memory_offset: offset } });

  it("is listed among the server's extensions", async () => {
    const { extensions } = (await (await fetch(`${server.httpUrl}/v2`)).json()) as { extensions: string[] };
    expect(extensions).toContain("system_shared_memory");
    expect(extensions).not.toContain("cuda_shared_memory");
    expect(extensions.indexOf("system_shared_memory")).toBe(extensions.indexOf("model_configuration") + 1);
  });

  it("registers, shows and unregisters regions over REST, refusing what Triton refuses", async () => {
    const key = createRegion(256);
    expect((await register("first", key, 128, 64)).status).toBe(200);
    expect((await register("second", key, 256)).status).toBe(200);
    expect(await regionStatus()).toEqual([{ name: "first", key, offset: 64, byte_size: 128 }, { name: "second", key, offset: 0, byte_size: 256 }]);
    expect(await regionStatus("/v2/systemsharedmemory/region/first/status")).toEqual([{ name: "first", key, offset: 64, byte_size: 128 }]);

    await expectError(register("first", key, 16), 400, "shared memory region 'first' already in manager");
    // A key shm_open does not open is INTERNAL in Triton (src/shared_memory_manager.cc, OpenSharedMemoryRegion): 500.
    await expectError(register("missing", "/itest-shm-no-such-key", 16), 500, "Unable to open shared memory region: '/itest-shm-no-such-key'");
    await expectError(register("escape", "/../etc/passwd", 16), 500, "Unable to open shared memory region: '/../etc/passwd': a key names one file of /dev/shm");
    await expectError(register("large", key, 256, 1), 400, "failed to register shared memory region 'large': invalid args");
    await expectError(post("/v2/systemsharedmemory/region/bad/register", { key, offset: 0 }), 400, /'byte_size' must be a non-negative integer/);
    await expectError(post("/v2/systemsharedmemory/region/bad/register", { offset: 0, byte_size: 4 }), 400, /'key' must be a non-empty string/);
    await expectError(fetch(`${server.httpUrl}/v2/systemsharedmemory/region/nope/status`), 404, "Unable to find system shared memory region: 'nope'");

    expect((await post("/v2/systemsharedmemory/region/first/unregister")).status).toBe(200);
    expect((await post("/v2/systemsharedmemory/region/never-registered/unregister")).status).toBe(200);
    expect(await regionStatus()).toEqual([{ name: "second", key, offset: 0, byte_size: 256 }]);
    expect((await post("/v2/systemsharedmemory/unregister")).status).toBe(200);
    expect(await regionStatus()).toEqual([]);
  });

  it("refuses a key that is a symbolic link or not a regular file, leaving what it names untouched", async () => {
    const outside = mkdtempSync(join(tmpdir(), "itest-shm-target-"));
    const secret = join(outside, "secret");
    writeFileSync(secret, Buffer.alloc(128, 7));
    const linkKey = `/itest-shm-${process.pid}-link`;
    const fifoKey = `/itest-shm-${process.pid}-fifo`;
    created.push(`/dev/shm${linkKey}`, `/dev/shm${fifoKey}`, outside);
    symlinkSync(secret, `/dev/shm${linkKey}`);
    execFileSync("mkfifo", [`/dev/shm${fifoKey}`]);

    await expectError(register("link", linkKey, 128), 500, `Unable to open shared memory region: '${linkKey}': it is a symbolic link`);
    await expectError(register("fifo", fifoKey, 16), 400, `Unable to open shared memory region: '${fifoKey}': not a regular file`);
    const grpcError = await grpcCallError(grpc.unary("SystemSharedMemoryRegister", { name: "link", key: linkKey, offset: 0, byte_size: 128 }));
    expect(grpcError.code).toBe(status.INTERNAL);
    expect(grpcError.details).toBe(`Unable to open shared memory region: '${linkKey}': it is a symbolic link`);
    expect(await regionStatus()).toEqual([]);
    expect(readFileSync(secret)).toEqual(Buffer.alloc(128, 7));
  });

  it(`registers at most --max-shared-memory-regions (${MAX_REGIONS}) regions`, async () => {
    const key = createRegion(64);
    for (let i = 0; i < MAX_REGIONS; i++) expect((await register(`r${i}`, key, 64)).status).toBe(200);
    await expectError(register("one-more", key, 64), 400, /4 regions are registered, the most allowed \(--max-shared-memory-regions\)/);
    expect((await post("/v2/systemsharedmemory/region/r0/unregister")).status).toBe(200);
    expect((await register("one-more", key, 64)).status).toBe(200);
  });

  it("infers over REST with inputs read from and outputs written to shared memory", async () => {
    const { inputKey, outputKey } = simpleRegions();
    await register("in", inputKey, 128);
    await register("out", outputKey, 128);
    const response = await infer({ inputs: [shmInput("INPUT0", "in", 0), shmInput("INPUT1", "in", 64)], outputs: [shmOutput("OUTPUT0", "out", 0), shmOutput("OUTPUT1", "out", 64)] });
    expect(response.status).toBe(200);
    expect(response.headers.get("inference-header-content-length")).toBeNull();
    expect(((await response.json()) as { outputs: unknown }).outputs).toEqual([
      { name: "OUTPUT0", datatype: "INT32", shape: [1, 16], parameters: { shared_memory_region: "out", shared_memory_byte_size: 64 } },
      { name: "OUTPUT1", datatype: "INT32", shape: [1, 16], parameters: { shared_memory_region: "out", shared_memory_byte_size: 64 } },
    ]);
    expect(int32Values(regionBytes(outputKey, 0, 64))).toEqual(SUMS);
    expect(int32Values(regionBytes(outputKey, 64, 64))).toEqual(DIFFERENCES);
  });

  it("mixes shared-memory tensors with JSON and binary ones over REST", async () => {
    const { inputKey, outputKey } = simpleRegions();
    await register("in", inputKey, 128);
    await register("out", outputKey, 128);
    const binary = await infer({
      inputs: [shmInput("INPUT0", "in", 0), { name: "INPUT1", datatype: "INT32", shape: [1, 16], parameters: { binary_data_size: 64 } }],
      outputs: [shmOutput("OUTPUT0", "out", 0), { name: "OUTPUT1", parameters: { binary_data: true } }],
    }, int32Bytes(INPUT1));
    expect(binary.status).toBe(200);
    const headerLength = Number(binary.headers.get("inference-header-content-length"));
    const body = Buffer.from(await binary.arrayBuffer());
    expect(JSON.parse(body.subarray(0, headerLength).toString()).outputs[1]).toEqual({ name: "OUTPUT1", datatype: "INT32", shape: [1, 16], parameters: { binary_data_size: 64 } });
    expect(int32Values(body.subarray(headerLength))).toEqual(DIFFERENCES);
    expect(int32Values(regionBytes(outputKey, 0, 64))).toEqual(SUMS);

    const json = await infer({
      inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 16], data: INPUT1 }, shmInput("INPUT1", "in", 0)],
      outputs: [{ name: "OUTPUT0" }, shmOutput("OUTPUT1", "out", 64)],
    });
    const answer = (await json.json()) as { outputs: { name: string; data?: number[] }[] };
    expect(answer.outputs[0]!.data).toEqual(INPUT1.map((v, i) => v + INPUT0[i]!));
    expect(answer.outputs[1]).not.toHaveProperty("data");
    expect(int32Values(regionBytes(outputKey, 64, 64))).toEqual(INPUT1.map((v, i) => v - INPUT0[i]!));
  });

  it("refuses bad shared-memory parameters over REST with Triton's messages", async () => {
    const { inputKey, outputKey } = simpleRegions();
    await register("in", inputKey, 128);
    await register("out", outputKey, 16);
    const input1 = shmInput("INPUT1", "in", 64);
    await expectError(infer({ inputs: [shmInput("INPUT0", "nowhere", 0), input1] }), 404, "Unable to find shared memory region: 'nowhere'");
    await expectError(infer({ inputs: [shmInput("INPUT0", "in", 128), input1] }), 400, "Invalid offset for shared memory region: 'in'");
    await expectError(infer({ inputs: [shmInput("INPUT0", "in", 96), input1] }), 400, "Invalid offset + byte size for shared memory region: 'in'");
    await expectError(infer({ inputs: [shmInput("INPUT0", "in", 0, 32), input1] }), 400, /input byte size mismatch for input 'INPUT0' for model 'simple'. Expected 64, got 32/);
    await expectError(infer({ inputs: [{ ...shmInput("INPUT0", "in", 0), data: INPUT0 }, input1] }), 400,
      "unexpected 'data' provided when using shared memory for input tensor 'INPUT0' for model 'simple'");
    await expectError(infer({ inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 16], parameters: { shared_memory_region: "in" } }, input1] }), 400,
      "'shared_memory_byte_size' must be specified along with 'shared_memory_region' parameter for tensor 'INPUT0'");
    await expectError(infer({ inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 16], data: INPUT0, parameters: { shared_memory_offset: 0 } }, input1] }), 400,
      "'shared_memory_offset' can not be specified without 'shared_memory_region' parameter for tensor 'INPUT0'");
    await expectError(infer({ inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 16], parameters: { shared_memory_region: 7, shared_memory_byte_size: 64 } }, input1] }), 400,
      "invalid value type for 'shared_memory_region' parameter for tensor 'INPUT0', expected a string");
    await expectError(infer({ inputs: [shmInput("INPUT0", "in", 0), input1], outputs: [{ ...shmOutput("OUTPUT0", "in", 0), parameters: { ...(shmOutput("OUTPUT0", "in", 0) as { parameters: object }).parameters, classification: 2 } }] }), 400,
      "output 'OUTPUT0': output can't set both 'shared_memory_region' and 'classification'");
    await expectError(infer({ inputs: [shmInput("INPUT0", "in", 0), input1], outputs: [shmOutput("OUTPUT0", "out", 0, 16)] }), 400,
      "shared memory size specified with the request for output 'OUTPUT0' (16 bytes) should be at least 64 bytes to hold the results");

    expect((await post("/v2/systemsharedmemory/region/in/unregister")).status).toBe(200);
    await expectError(infer({ inputs: [shmInput("INPUT0", "in", 0), input1] }), 404, "Unable to find shared memory region: 'in'");
  });

  it("reads at most --max-shared-memory-input-bytes (128) from shared memory for one request", async () => {
    await register("big", createRegion(256), 256);
    // Both simple inputs (2 x 64 bytes) are exactly the limit, as in the tests above; more is refused before any read.
    await expectError(infer({ inputs: [shmInput("INPUT0", "big", 0), shmInput("INPUT1", "big", 64, 192)] }), 400,
      "the request's inputs in shared memory hold 256 bytes, more than the 128 allowed (--max-shared-memory-input-bytes)");
    expect((await fetch(`${server.httpUrl}/v2/health/ready`)).status).toBe(200);
  });

  const grpcShm = (region: string, offset: number, byteSize = 64): Record<string, GrpcMessage> => ({
    shared_memory_region: { string_param: region }, shared_memory_offset: { int64_param: String(offset) }, shared_memory_byte_size: { int64_param: String(byteSize) },
  });

  it("registers, shows and unregisters regions over gRPC", async () => {
    const key = createRegion(128);
    await grpc.unary("SystemSharedMemoryRegister", { name: "g", key, offset: "0", byte_size: "128" });
    expect(await grpc.unary("SystemSharedMemoryStatus", {})).toEqual({ regions: { g: { name: "g", key, offset: "0", byte_size: "128" } } });
    expect(await grpc.unary("SystemSharedMemoryStatus", { name: "g" })).toEqual({ regions: { g: { name: "g", key, offset: "0", byte_size: "128" } } });
    // Both frontends share one set of regions.
    expect(await regionStatus()).toEqual([{ name: "g", key, offset: 0, byte_size: 128 }]);

    const duplicate = await grpcCallError(grpc.unary("SystemSharedMemoryRegister", { name: "g", key, offset: "0", byte_size: "16" }));
    expect([duplicate.code, duplicate.details]).toEqual([status.ALREADY_EXISTS, "shared memory region 'g' already in manager"]);
    const missing = await grpcCallError(grpc.unary("SystemSharedMemoryRegister", { name: "m", key: "/itest-shm-no-such-key", offset: "0", byte_size: "16" }));
    expect([missing.code, missing.details]).toEqual([status.INTERNAL, "Unable to open shared memory region: '/itest-shm-no-such-key'"]);
    const unknown = await grpcCallError(grpc.unary("SystemSharedMemoryStatus", { name: "nope" }));
    expect([unknown.code, unknown.details]).toEqual([status.NOT_FOUND, "Unable to find system shared memory region: 'nope'"]);

    await grpc.unary("SystemSharedMemoryUnregister", { name: "g" });
    expect(await grpc.unary("SystemSharedMemoryStatus", {})).toEqual({ regions: {} });
    await grpc.unary("SystemSharedMemoryUnregister", {});
  });

  it("answers a gRPC register of a region that cannot be opened INTERNAL (Triton's qa/L0_grpc/python_grpc_aio_test.py)", async () => {
    // test_register_system_shared_memory: register_system_shared_memory("test_shm", "/test_shm", 0) raises
    // "[StatusCode.INTERNAL] Unable to open shared memory region: '/test_shm'".
    const refused = await grpcCallError(grpc.unary("SystemSharedMemoryRegister", { name: "test_shm", key: "/test_shm", offset: "0", byte_size: "0" }));
    expect([refused.code, refused.details]).toEqual([status.INTERNAL, "Unable to open shared memory region: '/test_shm'"]);
    expect(await grpc.unary("SystemSharedMemoryStatus", {})).toEqual({ regions: {} });
  });

  it("infers over gRPC with shared-memory tensors, mixed with raw contents", async () => {
    const { inputKey, outputKey } = simpleRegions();
    await grpc.unary("SystemSharedMemoryRegister", { name: "in", key: inputKey, offset: "0", byte_size: "128" });
    await grpc.unary("SystemSharedMemoryRegister", { name: "out", key: outputKey, offset: "0", byte_size: "128" });
    const tensor = (name: string, parameters: Record<string, GrpcMessage> = {}): GrpcMessage => ({ name, datatype: "INT32", shape: ["1", "16"], parameters });
    const response = await grpc.unary<{ outputs: GrpcMessage[]; raw_output_contents: Buffer[] }>("ModelInfer", {
      model_name: "simple",
      inputs: [tensor("INPUT0", grpcShm("in", 0)), tensor("INPUT1")],
      outputs: [{ name: "OUTPUT0", parameters: grpcShm("out", 0) }, { name: "OUTPUT1" }],
      raw_input_contents: [int32Bytes(INPUT1)],
    });
    expect(response.outputs[0]).toMatchObject({
      name: "OUTPUT0", datatype: "INT32", shape: ["1", "16"],
      parameters: { shared_memory_region: { string_param: "out" }, shared_memory_byte_size: { int64_param: "64" } },
    });
    // As Triton: the shared-memory output keeps an empty raw entry, so the others are found by position.
    expect(response.raw_output_contents.map((raw) => raw.byteLength)).toEqual([0, 64]);
    expect(int32Values(response.raw_output_contents[1]!)).toEqual(DIFFERENCES);
    expect(int32Values(regionBytes(outputKey, 0, 64))).toEqual(SUMS);

    const wrongType = await grpcCallError(grpc.unary("ModelInfer", {
      model_name: "simple", inputs: [tensor("INPUT0", { ...grpcShm("in", 0), shared_memory_byte_size: { string_param: "64" } }), tensor("INPUT1", grpcShm("in", 64))],
    }));
    expect([wrongType.code, wrongType.details]).toEqual([status.INVALID_ARGUMENT, "invalid value type for 'shared_memory_byte_size' parameter for tensor 'INPUT0', expected int64_param."]);
    const contents = await grpcCallError(grpc.unary("ModelInfer", {
      model_name: "simple", inputs: [{ ...tensor("INPUT0", grpcShm("in", 0)), contents: { int_contents: INPUT0 } }, tensor("INPUT1", grpcShm("in", 64))],
    }));
    expect([contents.code, contents.details]).toEqual([status.INVALID_ARGUMENT, "unexpected 'content' provided when using shared memory for input tensor 'INPUT0' for model 'simple'"]);

    await grpc.unary("SystemSharedMemoryUnregister", { name: "in" });
    const gone = await grpcCallError(grpc.unary("ModelInfer", { model_name: "simple", inputs: [tensor("INPUT0", grpcShm("in", 0)), tensor("INPUT1", grpcShm("in", 64))] }));
    expect([gone.code, gone.details]).toEqual([status.NOT_FOUND, "Unable to find shared memory region: 'in'"]);
  });

  it("holds no CUDA shared memory: status lists none, unregister (all, or any name) is a no-op, register is 501, over REST and gRPC", async () => {
    expect(await regionStatus("/v2/cudasharedmemory/status")).toEqual([]);
    await expectError(fetch(`${server.httpUrl}/v2/cudasharedmemory/region/never/status`), 404, "Unable to find cuda shared memory region: 'never'");
    expect((await post("/v2/cudasharedmemory/unregister")).status).toBe(200);
    expect((await post("/v2/cudasharedmemory/region/never/unregister")).status).toBe(200);
    await expectError(post("/v2/cudasharedmemory/region/r/register", { raw_handle: { b64: "" }, device_id: 0, byte_size: 64 }), 501, "the CUDA shared memory extension is not supported by this server");
    expect(await grpc.unary("CudaSharedMemoryStatus", {})).toEqual({ regions: {} });
    expect(await grpc.unary("CudaSharedMemoryUnregister", { name: "never" })).toEqual({});
    expect(await grpc.unary("CudaSharedMemoryUnregister", {})).toEqual({});
    const register = await grpcCallError(grpc.unary("CudaSharedMemoryRegister", { name: "r", raw_handle: Buffer.alloc(64), device_id: 0, byte_size: 64 }));
    expect(register.code).toBe(status.UNIMPLEMENTED);
  });

  it("keeps serving when regions are unregistered while requests use them", async () => {
    const { inputKey, outputKey } = simpleRegions();
    await register("in", inputKey, 128);
    await register("out", outputKey, 128);
    const body = { inputs: [shmInput("INPUT0", "in", 0), shmInput("INPUT1", "in", 64)], outputs: [shmOutput("OUTPUT0", "out", 0)] };
    const requests = Array.from({ length: 40 }, () => infer(body));
    await post("/v2/systemsharedmemory/unregister");
    const statuses = await Promise.all(requests.map(async (request) => (await request).status));
    expect(statuses.every((code) => code === 200 || code === 404)).toBe(true);
    await register("in", inputKey, 128);
    await register("out", outputKey, 128);
    expect((await infer(body)).status).toBe(200);
    expect(int32Values(regionBytes(outputKey, 0, 64))).toEqual(SUMS);
  });
});

describe("system shared memory without --allow-client-shm (the default, as in Triton since 26.05)", () => {
  let server: RunningServer;
  let grpc: GrpcTestClient;
  beforeAll(async () => {
    server = await startServer({ services: ["http", "grpc"] });
    grpc = new GrpcTestClient(server.grpcAddress!);
  });
  afterAll(async () => {
    grpc?.close();
    await server?.stop();
    for (const file of created) rmSync(file, { force: true, recursive: true });
  });

  it("refuses to register and unregister regions of either kind over REST and gRPC with Triton's text, and lists none", async () => {
    const key = createRegion(64);
    const message = "Client shared memory is disabled. Start the server with '--allow-client-shm=true' to enable.";
    const refusals: [string, string][] = [
      ["/v2/systemsharedmemory/region/r/register", JSON.stringify({ key, offset: 0, byte_size: 64 })],
      ["/v2/systemsharedmemory/region/r/unregister", ""], ["/v2/systemsharedmemory/unregister", ""],
      ["/v2/cudasharedmemory/region/r/register", JSON.stringify({ raw_handle: { b64: "" }, device_id: 0, byte_size: 64 })],
      ["/v2/cudasharedmemory/region/r/unregister", ""], ["/v2/cudasharedmemory/unregister", ""],
    ];
    for (const [url, body] of refusals) {
      const response = await fetch(`${server.httpUrl}${url}`, { method: "POST", body });
      expect(response.status, url).toBe(501);
      expect(await response.json(), url).toEqual({ error: message });
    }
    for (const [rpc, request] of [["SystemSharedMemoryRegister", { name: "r", key, offset: 0, byte_size: 64 }], ["SystemSharedMemoryUnregister", { name: "r" }], ["CudaSharedMemoryUnregister", {}]] as const) {
      const refused = await grpcCallError(grpc.unary(rpc, request));
      expect([refused.code, refused.details], rpc).toEqual([status.UNIMPLEMENTED, message]);
    }
    expect(await (await fetch(`${server.httpUrl}/v2/systemsharedmemory/status`)).json()).toEqual([]);
    expect(await (await fetch(`${server.httpUrl}/v2/cudasharedmemory/status`)).json()).toEqual([]);
  });
});

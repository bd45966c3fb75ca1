import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { status } from "@grpc/grpc-js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../helpers/server-process";
import { writeSimpleModel } from "../helpers/simple-model";
import { waitFor } from "../helpers/wait-for";
import { grpcCallError, type GrpcMessage, GrpcTestClient, streamResponses } from "./grpc-transport";

const simpleBody = JSON.stringify({
  inputs: [0, 1].map((i) => ({ name: `INPUT${i}`, datatype: "INT32", shape: [1, 16], data: Array.from({ length: 16 }, (_, j) => j) })),
});
const grpcInfer: GrpcMessage = {
  model_name: "simple",
  inputs: [0, 1].map((i) => ({ name: `INPUT${i}`, datatype: "INT32", shape: [1, 16], contents: { int_contents: Array.from({ length: 16 }, (_, j) => j) } })),
};

const CORE_SEQUENCE = ["REQUEST_START", "QUEUE_START", "COMPUTE_START", "COMPUTE_INPUT_END", "COMPUTE_OUTPUT_START", "COMPUTE_END", "REQUEST_END"];
const HTTP_SEQUENCE = ["HTTP_RECV_START", "HTTP_RECV_END", ...CORE_SEQUENCE, "HTTP_SEND_START", "HTTP_SEND_END"];
const GRPC_SEQUENCE = ["GRPC_WAITREAD_START", "GRPC_WAITREAD_END", ...CORE_SEQUENCE, "GRPC_SEND_START", "GRPC_SEND_END"];

const DEFAULTS = { trace_level: ["OFF"], trace_rate: "1000", trace_count: "-1", log_frequency: "0", trace_file: "", trace_mode: "triton" };

interface TraceEntry {
  id: number;
  model_name?: string;
  model_version?: number;
  request_id?: string;
  timestamps?: { name: string; ns: number }[];
  activity?: string;
  tensor?: TensorEntry;
}

/** A TENSORS-level entry's tensor, as Triton writes it: every field a string. */
interface TensorEntry {
  name: string;
  data: string;
  shape: string;
  dtype: string;
}

interface Trace {
  readonly model: TraceEntry | undefined;
  readonly names: string[];
  readonly ns: number[];
  readonly tensors: { activity: string; tensor: TensorEntry }[];
}

/** A trace file's entries, grouped by trace id (in the order the file has them). */
function readTraces(file: string): Map<number, Trace> {
  const entries = JSON.parse(readFileSync(file, "utf8")) as TraceEntry[];
  const traces = new Map<number, { model: TraceEntry | undefined; names: string[]; ns: number[]; tensors: Trace["tensors"] }>();
  for (const entry of entries) {
    const trace = traces.get(entry.id) ?? { model: undefined, names: [], ns: [], tensors: [] };
    traces.set(entry.id, trace);
    if (entry.model_name !== undefined) trace.model = entry;
    if (entry.tensor !== undefined) trace.tensors.push({ activity: entry.activity!, tensor: entry.tensor });
    for (const timestamp of entry.timestamps ?? []) {
      trace.names.push(timestamp.name);
      trace.ns.push(timestamp.ns);
    }
  }
  return traces;
}

function expectTrace(trace: Trace, sequence: readonly string[]): void {
  expect(trace.model).toMatchObject({ model_name: "simple", model_version: 1 });
  expect(trace.names).toEqual(sequence);
  for (let i = 1; i < trace.ns.length; i++) expect(trace.ns[i]!).toBeGreaterThanOrEqual(trace.ns[i - 1]!);
}

describe("trace extension", () => {
  const directories: string[] = [];
  let server: RunningServer | undefined;
  let grpc: GrpcTestClient | undefined;
  const tempFile = (): string => {
    const directory = mkdtempSync(path.join(os.tmpdir(), "trace-test-"));
    directories.push(directory);
    return path.join(directory, "trace.json");
  };
  const start = async (args: readonly string[], repository?: string): Promise<RunningServer> => {
    server = await startServer({ services: ["http", "grpc"], args, repository });
    grpc = new GrpcTestClient(server.grpcAddress!);
    return server;
  };
  const stop = async (): Promise<void> => {
    grpc?.close();
    grpc = undefined;
    await server?.stop();
    server = undefined;
  };
  afterEach(stop);
  afterAll(() => {
    for (const directory of directories) rmSync(directory, { recursive: true, force: true });
  });

  const rest = (method: string, urlPath: string, body?: unknown) => fetch(`${server!.httpUrl}${urlPath}`, {
    method, headers: body === undefined ? {} : { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const restInfer = async (count: number): Promise<void> => {
    for (let i = 0; i < count; i++) expect((await fetch(`${server!.httpUrl}/v2/models/simple/infer`, { method: "POST", body: simpleBody })).status).toBe(200);
  };
  const grpcSettings = async (request: GrpcMessage): Promise<Record<string, string[]>> => {
    const response = await grpc!.unary<{ settings: Record<string, { value: string[] }> }>("TraceSetting", request);
    return Object.fromEntries(Object.entries(response.settings).map(([key, { value }]) => [key, value]));
  };

  describe("settings", () => {
    let file: string;
    beforeAll(() => {
      file = tempFile();
    });

    it("reports Triton's defaults, and 'trace' among the extensions at Triton's place", async () => {
      await start([]);
      expect(await (await rest("GET", "/v2/trace/setting")).json()).toEqual(DEFAULTS);
      expect(await (await rest("GET", "/v2/models/simple/trace/setting")).json()).toEqual(DEFAULTS);
      expect(await grpcSettings({})).toEqual(Object.fromEntries(Object.entries(DEFAULTS).map(([k, v]) => [k, Array.isArray(v) ? v : [v]])));
      const extensions = ((await (await rest("GET", "/v2")).json()) as { extensions: string[] }).extensions;
      expect(extensions.slice(-3)).toEqual(["statistics", "trace", "logging"]);
      // Tracing cannot be turned on without a file to write to; nothing changes.
      const refused = await rest("POST", "/v2/trace/setting", { trace_level: ["TIMESTAMPS"] });
      expect(refused.status).toBe(400);
      expect(await refused.json()).toEqual({ error: "Attempting to set invalid trace setting :trace file name is not given" });
      expect(await (await rest("GET", "/v2/trace/setting")).json()).toEqual(DEFAULTS);
    });

    it("updates the global setting and model overrides, and clears an override's values with null", async () => {
      await start(["--trace-config", `triton,file=${file}`]);
      const global = await rest("POST", "/v2/trace/setting", { trace_rate: "50", trace_count: "20" });
      expect(await global.json()).toEqual({ ...DEFAULTS, trace_rate: "50", trace_count: "20", trace_file: file });

      const model = await rest("POST", "/v2/models/simple/trace/setting", { trace_level: ["TIMESTAMPS"], trace_rate: "3" });
      expect(await model.json()).toEqual({ ...DEFAULTS, trace_level: ["TIMESTAMPS"], trace_rate: "3", trace_count: "20", trace_file: file });
      // The global setting is untouched; values the model does not set follow it.
      expect(await (await rest("GET", "/v2/trace/setting")).json()).toMatchObject({ trace_level: ["OFF"], trace_rate: "50" });
      await rest("POST", "/v2/trace/setting", { log_frequency: "7" });
      expect(await (await rest("GET", "/v2/models/simple/trace/setting")).json()).toMatchObject({ trace_rate: "3", log_frequency: "7" });

      const cleared = await rest("POST", "/v2/models/simple/trace/setting", { trace_rate: null });
      expect(await cleared.json()).toMatchObject({ trace_level: ["TIMESTAMPS"], trace_rate: "50" });
      await rest("POST", "/v2/models/simple/trace/setting", { trace_level: null });
      expect(await (await rest("GET", "/v2/models/simple/trace/setting")).json()).toMatchObject({ trace_level: ["OFF"], trace_rate: "50" });
      await rest("POST", "/v2/trace/setting", { trace_rate: null, trace_count: null, log_frequency: null });
      expect(await (await rest("GET", "/v2/trace/setting")).json()).toEqual({ ...DEFAULTS, trace_file: file });

      // gRPC: the same settings, an empty value list clears.
      expect(await grpcSettings({ model_name: "simple", settings: { trace_count: { value: ["7"] } } })).toMatchObject({ trace_count: ["7"] });
      expect(await grpcSettings({ model_name: "simple" })).toMatchObject({ trace_count: ["7"] });
      expect(await grpcSettings({ model_name: "simple", settings: { trace_count: { value: [] } } })).toMatchObject({ trace_count: ["-1"] });
    });

    it("refuses bad values (400 / INVALID_ARG) and changes nothing", async () => {
      await start(["--trace-config", `triton,file=${file}`, "--trace-config", "rate=10"]);
      const before = await (await rest("GET", "/v2/trace/setting")).json();
      const cases: [string, unknown, number, string][] = [
        ["/v2/trace/setting", { trace_rate: "abc" }, 400, "Unable to parse 'trace_rate', got: abc"],
        ["/v2/trace/setting", { trace_rate: 5 }, 400, "'trace_rate' must be a string"],
        ["/v2/trace/setting", { trace_count: "-2" }, 400, "Unable to parse 'trace_count', value is out of range [ -1, 2147483647 ], got: -2"],
        ["/v2/trace/setting", { trace_level: ["LOUD"] }, 400, "unknown trace level 'LOUD': expected OFF, TIMESTAMPS or TENSORS"],
        ["/v2/trace/setting", { trace_level: "TIMESTAMPS" }, 400, "'trace_level' must be an array of strings"],
        ["/v2/trace/setting", { trace_level: ["OFF", "TIMESTAMPS"] }, 400, "Expect only one trace level 'OFF' is specified"],
        ["/v2/trace/setting", { trace_level: ["TIMESTAMPS"], trace_rate: "0" }, 400, "Attempting to set invalid trace setting :sample rate must be non-zero"],
        ["/v2/trace/setting", { trace_rate: "2", verbose: "1" }, 400, "unknown trace setting 'verbose': expected trace_level, trace_rate, trace_count or log_frequency"],
        ["/v2/trace/setting", { trace_file: "/tmp/elsewhere.json" }, 501, "trace file location can not be updated through network protocol"],
        ["/v2/models/nope/trace/setting", { trace_rate: "2" }, 400, "Request for unknown model : nope"],
      ];
      for (const [urlPath, body, code, error] of cases) {
        const response = await rest("POST", urlPath, body);
        expect({ code: response.status, body: await response.json() }).toEqual({ code, body: { error } });
      }
      const notJson = await fetch(`${server!.httpUrl}/v2/trace/setting`, { method: "POST", body: "{" });
      expect(notJson.status).toBe(400);
      expect(await (await rest("GET", "/v2/trace/setting")).json()).toEqual(before);
      expect(await (await rest("GET", "/v2/models/simple/trace/setting")).json()).toEqual(before);

      const grpcRefused = await grpcCallError(grpc!.unary("TraceSetting", { settings: { trace_rate: { value: ["1", "2"] } } }));
      expect(grpcRefused.code).toBe(status.INVALID_ARGUMENT);
      expect(grpcRefused.details).toBe("expect only 1 value for 'trace_rate', got 2");
      expect((await grpcCallError(grpc!.unary("TraceSetting", { model_name: "nope", settings: {} }))).code).toBe(status.INVALID_ARGUMENT);
      expect((await grpcCallError(grpc!.unary("TraceSetting", { settings: { trace_count: { value: ["x"] } } }))).code).toBe(status.INVALID_ARGUMENT);
      expect(await grpcSettings({})).toMatchObject({ trace_rate: ["10"], trace_count: ["-1"] });
    });
  });

  describe("trace files", () => {
    it("writes nothing while tracing is off", async () => {
      const file = tempFile();
      await start(["--trace-config", `triton,file=${file}`, "--trace-config", "rate=1"]);
      await restInfer(3);
      await grpc!.unary("ModelInfer", grpcInfer);
      await stop();
      expect(existsSync(file)).toBe(false);
      expect(existsSync(`${file}.0`)).toBe(false);
    });

    it("traces one request in trace_rate over REST and gRPC (turned on with POST), in Triton's format and order", async () => {
      const file = tempFile();
      await start(["--trace-config", `triton,file=${file}`]);
      expect((await rest("POST", "/v2/trace/setting", { trace_level: ["TIMESTAMPS"], trace_rate: "2" })).status).toBe(200);
      await restInfer(10);
      for (let i = 0; i < 4; i++) await grpc!.unary("ModelInfer", { ...grpcInfer, id: `grpc-${i}` });
      await stop();
      const traces = [...readTraces(file).values()];
      expect(traces).toHaveLength(7);
      const http = traces.filter((trace) => trace.names[0] === "HTTP_RECV_START");
      const viaGrpc = traces.filter((trace) => trace.names[0] === "GRPC_WAITREAD_START");
      expect(http).toHaveLength(5);
      expect(viaGrpc).toHaveLength(2);
      for (const trace of http) expectTrace(trace, HTTP_SEQUENCE);
      for (const trace of viaGrpc) expectTrace(trace, GRPC_SEQUENCE);
      // Triton's sampling: the rate-th request, then every rate-th; request ids are carried.
      expect(viaGrpc.map((trace) => trace.model?.request_id)).toEqual(["grpc-1", "grpc-3"]);
    });

    it("stops at trace_count and writes those traces to <file>.0, as Triton", async () => {
      const file = tempFile();
      await start(["--trace-config", `triton,file=${file}`, "--trace-config", "level=TIMESTAMPS", "--trace-config", "rate=1", "--trace-config", "count=3"]);
      await restInfer(6);
      await waitFor(`${file}.0`, 10_000, async () => existsSync(`${file}.0`) || undefined);
      expect(await (await rest("GET", "/v2/trace/setting")).json()).toMatchObject({ trace_count: "0" });
      await stop();
      const traces = [...readTraces(`${file}.0`).values()];
      expect(traces).toHaveLength(3);
      for (const trace of traces) expectTrace(trace, HTTP_SEQUENCE);
      expect(existsSync(file)).toBe(false);
    });

    it("rolls <file>.<index> every log_frequency traces (gRPC, ModelStreamInfer included), the rest at shutdown", async () => {
      const file = tempFile();
      await start(["--trace-config", `triton,file=${file}`, "--trace-config", "level=TIMESTAMPS", "--trace-config", "rate=1", "--trace-config", "triton,log-frequency=2"]);
      for (let i = 0; i < 3; i++) await grpc!.unary("ModelInfer", grpcInfer);
      await streamResponses(grpc!.modelStreamInfer(), [grpcInfer, grpcInfer]);
      await waitFor(`${file}.1`, 10_000, async () => existsSync(`${file}.1`) || undefined);
      await stop();
      const groups = [0, 1, 2].map((index) => [...readTraces(`${file}.${index}`).values()]);
      expect(groups.map((group) => group.length)).toEqual([2, 2, 1]);
      for (const trace of groups.flat()) expectTrace(trace, GRPC_SEQUENCE);
      expect(existsSync(`${file}.3`)).toBe(false);
      expect(existsSync(file)).toBe(false);
    });

    it("drops traces beyond --trace-max-pending-bytes, saying so once, and keeps serving", async () => {
      const file = tempFile();
      await start(["--trace-config", `triton,file=${file}`, "--trace-config", "level=TIMESTAMPS", "--trace-config", "rate=1", "--trace-max-pending-bytes", "1"]);
      await restInfer(3);
      const logs = server!.logs();
      await stop();
      expect(logs.match(/cannot keep up: dropping traces/g)).toHaveLength(1);
      expect(existsSync(file)).toBe(false);
    });

    it("samples a model by its own override, other models by the global setting", async () => {
      const file = tempFile();
      await start(["--trace-config", `triton,file=${file}`, "--trace-config", "level=TIMESTAMPS"]);
      expect((await rest("POST", "/v2/models/simple/trace/setting", { trace_rate: "1" })).status).toBe(200);
      await restInfer(3);
      const identity = JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, 4], data: [1, 2, 3, 4] }] });
      for (let i = 0; i < 3; i++) await fetch(`${server!.httpUrl}/v2/models/identity_fp32/infer`, { method: "POST", body: identity });
      await stop();
      const traces = [...readTraces(file).values()];
      expect(traces).toHaveLength(3);
      for (const trace of traces) expectTrace(trace, HTTP_SEQUENCE);
    });

    it("traces an ensemble's steps as traces of their own, with the ensemble's id as parent_id", async () => {
      const file = tempFile();
      const repository = path.dirname(file);
      writeSimpleModel(repository, "add_sub", "max_batch_size: 8");
      mkdirSync(path.join(repository, "pair", "1"), { recursive: true });
      const tensors = (kind: string, names: string[]): string => `${kind} [ ${names.map((n) => `{ name: "${n}" data_type: TYPE_INT32 dims: [ 16 ] }`).join(", ")} ]`;
      const step = (inputs: string, output: string): string =>
        `{ model_name: "add_sub" model_version: -1 ${inputs} output_map { key: "OUTPUT0" value: "${output}" } }`;
      writeFileSync(path.join(repository, "pair", "config.pbtxt"), `platform: "ensemble"\nmax_batch_size: 8\n${tensors("input", ["A", "B"])}\n${tensors("output", ["S"])}
ensemble_scheduling { step [
  ${step('input_map { key: "INPUT0" value: "A" } input_map { key: "INPUT1" value: "B" }', "sum")},
  ${step('input_map { key: "INPUT0" value: "sum" } input_map { key: "INPUT1" value: "sum" }', "S")}
] }`);
      await start(["--trace-config", `triton,file=${file}`, "--trace-config", "level=TIMESTAMPS", "--trace-config", "rate=1"], repository);
      const body = JSON.stringify({ inputs: ["A", "B"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: Array.from({ length: 16 }, (_, j) => j) })) });
      expect((await fetch(`${server!.httpUrl}/v2/models/pair/infer`, { method: "POST", body })).status).toBe(200);
      await stop();
      const [ensembleTrace, ...steps] = [...readTraces(file).entries()];
      expect(ensembleTrace![1].model).toMatchObject({ model_name: "pair", model_version: 1 });
      expect(ensembleTrace![1].names).toEqual(["HTTP_RECV_START", "HTTP_RECV_END", "REQUEST_START", "REQUEST_END", "HTTP_SEND_START", "HTTP_SEND_END"]);
      expect(steps).toHaveLength(2);
      for (const [, trace] of steps) {
        expect(trace.model).toEqual({ id: expect.any(Number), model_name: "add_sub", model_version: 1, parent_id: ensembleTrace![0] });
        expect(trace.names).toEqual(CORE_SEQUENCE);
      }
    });
  });

  // The entries as server src/tracer.cc (TraceTensorActivity) writes them; the levels as qa/L0_trace/trace_endpoint_test.py sets them.
  describe("TENSORS level", () => {
    const counting = Array.from({ length: 16 }, (_, j) => j);
    const int32 = (name: string, values: number[]): TensorEntry => ({ name, data: values.join(","), shape: "1,16", dtype: "INT32" });
    const bytesInfer: GrpcMessage = {
      model_name: "identity_bytes",
      inputs: [{ name: "INPUT0", datatype: "BYTES", shape: [1, 2], contents: { bytes_contents: [Buffer.from("hello"), Buffer.from("wörld")] } }],
    };

    it("sets the levels together, answering them in Triton's order (test_http_update_settings, test_grpc_update_settings)", async () => {
      await start(["--trace-config", `triton,file=${tempFile()}`]);
      const both = await rest("POST", "/v2/trace/setting", { trace_level: ["TENSORS", "TIMESTAMPS"] });
      expect(await both.json()).toMatchObject({ trace_level: ["TIMESTAMPS", "TENSORS"] });
      expect(await (await rest("GET", "/v2/models/simple/trace/setting")).json()).toMatchObject({ trace_level: ["TIMESTAMPS", "TENSORS"] });
      expect(await grpcSettings({ model_name: "simple", settings: { trace_level: { value: ["TENSORS"] } } })).toMatchObject({ trace_level: ["TENSORS"] });
      expect(await grpcSettings({})).toMatchObject({ trace_level: ["TIMESTAMPS", "TENSORS"] });
    });

    it("writes an INT32 model's inputs as queued and its outputs as sent, beside the timestamps (--trace-config level=TIMESTAMPS level=TENSORS)", async () => {
      const file = tempFile();
      await start(["--trace-config", `triton,file=${file}`, "--trace-config", "level=TIMESTAMPS", "--trace-config", "level=TENSORS", "--trace-config", "rate=1"]);
      expect(await (await rest("GET", "/v2/trace/setting")).json()).toMatchObject({ trace_level: ["TIMESTAMPS", "TENSORS"] });
      await restInfer(1);
      await stop();
      const traces = [...readTraces(file).values()];
      expect(traces).toHaveLength(1);
      expectTrace(traces[0]!, HTTP_SEQUENCE);
      // simple: OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1; both inputs count 0..15.
      expect(traces[0]!.tensors).toEqual([
        { activity: "TENSOR_QUEUE_INPUT", tensor: int32("INPUT0", counting) },
        { activity: "TENSOR_QUEUE_INPUT", tensor: int32("INPUT1", counting) },
        { activity: "TENSOR_BACKEND_OUTPUT", tensor: int32("OUTPUT0", counting.map((j) => 2 * j)) },
        { activity: "TENSOR_BACKEND_OUTPUT", tensor: int32("OUTPUT1", counting.map(() => 0)) },
      ]);
    });

    it("writes BYTES elements each in quotes, and at [\"TENSORS\"] alone no timestamps and no model entry (gRPC)", async () => {
      const file = tempFile();
      await start(["--trace-config", `triton,file=${file}`, "--trace-config", "rate=1"]);
      expect((await rest("POST", "/v2/trace/setting", { trace_level: ["TENSORS"] })).status).toBe(200);
      // Refused before its queue, this traced request records nothing at this level, and leaves the file valid JSON.
      const refused = { model_name: "identity_bytes", inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 1], contents: { int_contents: [1] } }] };
      expect((await grpcCallError(grpc!.unary("ModelInfer", refused))).code).toBe(status.INVALID_ARGUMENT);
      await grpc!.unary("ModelInfer", bytesInfer);
      await stop();
      const traces = [...readTraces(file).values()];
      expect(traces).toHaveLength(1);
      expect(traces[0]).toMatchObject({ model: undefined, names: [] });
      const tensor = { data: '"hello","wörld"', shape: "1,2", dtype: "BYTES" };
      expect(traces[0]!.tensors).toEqual([
        { activity: "TENSOR_QUEUE_INPUT", tensor: { name: "INPUT0", ...tensor } },
        { activity: "TENSOR_BACKEND_OUTPUT", tensor: { name: "OUTPUT0", ...tensor } },
      ]);
      // Byte for byte what Triton streams: `\"` around each element, the text itself as it came.
      expect(readFileSync(file, "utf8")).toContain(String.raw`"tensor":{"name":"INPUT0","data":"\"hello\",\"wörld\"","shape":"1,2","dtype":"BYTES"}`);
    });

    it("drops a trace whose tensors pass --trace-max-pending-bytes before rendering them all, saying so once, and keeps serving", async () => {
      const file = tempFile();
      await start(["--trace-config", `triton,file=${file}`, "--trace-config", "level=TENSORS", "--trace-config", "rate=1", "--trace-max-pending-bytes", "200"]);
      await restInfer(2);
      const logs = server!.logs();
      await stop();
      expect(logs.match(/larger than --trace-max-pending-bytes \(200\) was dropped/g)).toHaveLength(1);
      expect(existsSync(file)).toBe(false);
    });
  });
});

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OnnxGraphBuilder } from "../../tools/model-builder/index";
import { type RunningServer, startServer } from "../helpers/server-process";
import { writeSimpleModel } from "../helpers/simple-model";

const DELAY_MS = 150;
const RUNS = 3;

const simpleIo = (dims: string): string => `input [
  { name: "INPUT0" data_type: TYPE_INT32 dims: [ ${dims} ] },
  { name: "INPUT1" data_type: TYPE_INT32 dims: [ ${dims} ] }
]
output [
  { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ ${dims} ] },
  { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ ${dims} ] }
]`;

const warmupInput = (name: string, dims: string, data: string): string => `{ key: "${name}" value: { data_type: TYPE_INT32 dims: [ ${dims} ] ${data} } }`;

function simpleModel(repository: string, name: string, config: string, warmupFiles: Record<string, Buffer> = {}): void {
  const dir = writeSimpleModel(repository, name, `max_batch_size: 8\n${config}`);
  for (const [file, bytes] of Object.entries(warmupFiles)) {
    mkdirSync(path.join(dir, "warmup"), { recursive: true });
    writeFileSync(path.join(dir, "warmup", file), bytes);
  }
}

/** VALUE = table[INDEX] over a 4-entry table: runs for indices 0..3, fails in ONNX Runtime for others. */
function tableLookupModel(): Buffer {
  const g = new OnnxGraphBuilder("table_lookup");
  g.addInput("INDEX", "INT64", ["batch", 1]);
  g.addInitializer("table", [4], Float32Array.of(0.5, 1.5, 2.5, 3.5));
  g.addNode({ opType: "Gather", inputs: ["table", "INDEX"], outputs: ["VALUE"] });
  g.addOutput("VALUE", "FLOAT", ["batch", 1]);
  return g.toModelBytes();
}

type IndexEntry = { name: string; version?: string; state: string; reason: string };
type Stats = { inference_count: number; execution_count: number };

describe("model_warmup: samples run on every instance before the model is ready", () => {
  let repository: string;
  let server: RunningServer;

  const post = (url: string, body: unknown = {}): Promise<Response> => fetch(`${server.httpUrl}${url}`, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
  const index = async (): Promise<IndexEntry[]> => (await (await post("/v2/repository/index")).json()) as IndexEntry[];
  const stats = async (model: string): Promise<Stats> => ((await (await fetch(`${server.httpUrl}/v2/models/${model}/stats`)).json()) as { model_stats: Stats[] }).model_stats[0]!;

  beforeAll(async () => {
    repository = mkdtempSync(path.join(os.tmpdir(), "warmup-repo-"));
    const ones = Buffer.from(new Int32Array(16).fill(1).buffer);
    simpleModel(repository, "warm_simple", `${simpleIo("16")}
instance_group [ { count: 2 kind: KIND_CPU } ]
model_warmup [
  { name: "zeros" batch_size: 8 count: 2 inputs [ ${warmupInput("INPUT0", "16", "zero_data: true")}, ${warmupInput("INPUT1", "16", "zero_data: true")} ] },
  { name: "from_files" batch_size: 1 inputs [ ${warmupInput("INPUT0", "16", 'input_data_file: "ones.bin"')}, ${warmupInput("INPUT1", "16", "random_data: true")} ] }
]`, { "ones.bin": ones });
    // The config is valid; only running the sample shows that index 99 is out of the table's range.
    const lookup = path.join(repository, "warm_out_of_range");
    mkdirSync(path.join(lookup, "1"), { recursive: true });
    writeFileSync(path.join(lookup, "1", "model.onnx"), tableLookupModel());
    mkdirSync(path.join(lookup, "warmup"));
    writeFileSync(path.join(lookup, "warmup", "index.bin"), Buffer.from(BigInt64Array.of(99n).buffer));
    writeFileSync(path.join(lookup, "config.pbtxt"), `platform: "onnxruntime_onnx"
max_batch_size: 4
input [ { name: "INDEX" data_type: TYPE_INT64 dims: [ 1 ] } ]
output [ { name: "VALUE" data_type: TYPE_FP32 dims: [ 1 ] } ]
model_warmup [ { name: "far_index" batch_size: 2 inputs { key: "INDEX" value: { data_type: TYPE_INT64 dims: [ 1 ] input_data_file: "index.bin" } } } ]`);
    simpleModel(repository, "warm_short_file", `${simpleIo("16")}
model_warmup [ { name: "short" batch_size: 2 inputs [ ${warmupInput("INPUT0", "16", 'input_data_file: "short.bin"')}, ${warmupInput("INPUT1", "16", "zero_data: true")} ] } ]`, { "short.bin": Buffer.alloc(60) });
    simpleModel(repository, "warm_missing_input", `${simpleIo("16")}
model_warmup [ { name: "half" batch_size: 1 inputs [ ${warmupInput("INPUT0", "16", "zero_data: true")} ] } ]`);
    simpleModel(repository, "warm_escaping_file", `${simpleIo("16")}
model_warmup [ { name: "escape" batch_size: 1 inputs [ ${warmupInput("INPUT0", "16", 'input_data_file: "../config.pbtxt"')}, ${warmupInput("INPUT1", "16", "zero_data: true")} ] } ]`);
    const slow = path.join(repository, "warm_slow");
    mkdirSync(path.join(slow, "1"), { recursive: true });
    writeFileSync(path.join(slow, "config.pbtxt"), `backend: "identity"
max_batch_size: 4
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
parameters [ { key: "execute_delay_ms" value: { string_value: "${DELAY_MS}" } } ]
instance_group [ { count: 2 kind: KIND_CPU } ]
model_warmup [ { name: "slow" batch_size: 4 count: ${RUNS} inputs { key: "INPUT0" value: { data_type: TYPE_FP32 dims: [ 2 ] random_data: true } } } ]`);
    server = await startServer({
      repository,
      args: ["--exit-on-error", "false", "--strict-readiness", "false", "--model-control-mode", "explicit", "--load-model", "*"],
    });
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(repository, { recursive: true, force: true });
  });

  it("serves a warmed-up model, and warmup executions are not counted in its statistics", async () => {
    expect((await index()).find((e) => e.name === "warm_simple")).toMatchObject({ state: "READY" });
    expect(await stats("warm_simple")).toMatchObject({ inference_count: 0, execution_count: 0 });
    const response = await post("/v2/models/warm_simple/infer", {
      inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) })),
    });
    expect(response.status).toBe(200);
    expect(await stats("warm_simple")).toMatchObject({ inference_count: 1, execution_count: 1 });
  });

  it("marks a model UNAVAILABLE, naming the sample and the backend's error, when a warmup execution fails", async () => {
    const entry = (await index()).find((e) => e.name === "warm_out_of_range" && e.version === "1");
    expect(entry).toMatchObject({ state: "UNAVAILABLE", reason: expect.stringMatching(/^model_warmup sample 'far_index' failed on instance 0: onnxruntime execution failed: .*99/) });
    const response = await post("/v2/models/warm_out_of_range/infer", {});
    expect(response.status).toBe(503);
  });

  it("refuses samples that cannot make a request: short data file, missing input, file outside warmup/", async () => {
    const entries = await index();
    const reason = (name: string): string | undefined => entries.find((e) => e.name === name && e.version === "1")?.reason;
    expect(reason("warm_short_file")).toBe("model_warmup sample 'short': warmup/short.bin has 60 bytes; input 'INPUT0' with dims [16] of INT32 needs 64");
    expect(reason("warm_missing_input")).toMatch(/^model_warmup sample 'half': expected 2 inputs but got 1 inputs for model '[^']*'\. Got input\(s\) \['[^']*'\], but missing required input\(s\) \['INPUT1'\]/);
    expect(reason("warm_escaping_file")).toBe("model_warmup sample 'escape': input_data_file '../config.pbtxt' must name a file inside the model's warmup/ directory");
  });

  it("answers a load request only once every instance has run every sample, and the model is not ready before", async () => {
    expect((await post("/v2/repository/models/warm_slow/unload")).status).toBe(200);
    const started = performance.now();
    const loading = post("/v2/repository/models/warm_slow/load");
    await new Promise((resolve) => setTimeout(resolve, DELAY_MS));
    expect((await fetch(`${server.httpUrl}/v2/models/warm_slow/ready`)).status).not.toBe(200);
    expect((await loading).status).toBe(200);
    // Two instances warm up side by side, each running the sample RUNS times back to back.
    expect(performance.now() - started).toBeGreaterThanOrEqual(RUNS * DELAY_MS);
    expect((await fetch(`${server.httpUrl}/v2/models/warm_slow/ready`)).status).toBe(200);
    expect(await stats("warm_slow")).toMatchObject({ inference_count: 0, execution_count: 0 });
  });
});

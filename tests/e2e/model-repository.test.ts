import { copyFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InferenceClient } from "../../client/index";
import { OnnxGraphBuilder } from "../../tools/model-builder/index";
import { EXAMPLE_REPOSITORY, runServerToExit, type RunningServer, SHARED_DATA, startServer } from "../helpers/server-process";

const TRITON_CONFIGS = path.join(SHARED_DATA, "triton-configs");
const SIMPLE_ONNX = path.join(EXAMPLE_REPOSITORY, "simple", "1", "model.onnx");

/** Stand-in weights for Triton's densenet_onnx example config: same tensor names and shapes, tiny graph. */
function densenetStandIn(): Buffer {
  const g = new OnnxGraphBuilder("densenet_stand_in");
  g.addInput("data_0", "FLOAT", [1, 3, 224, 224]);
  g.addInitializer("w", [1000, 3, 1, 1], Float32Array.from({ length: 3000 }, (_, i) => ((i * 7919) % 1000) / 1000));
  g.addNode({ opType: "GlobalAveragePool", inputs: ["data_0"], outputs: ["pooled"] });
  g.addNode({ opType: "Conv", inputs: ["pooled", "w"], outputs: ["fc6_1"] });
  g.addOutput("fc6_1", "FLOAT", [1, 1000, 1, 1]);
  return g.toModelBytes();
}

/** Stand-in for inception_onnx: NHWC [1,299,299,3] -> softmax over 1001 classes. */
function inceptionStandIn(): Buffer {
  const g = new OnnxGraphBuilder("inception_stand_in");
  g.addInput("input:0", "FLOAT", [1, 299, 299, 3]);
  g.addInitializer("w", [3, 1001], Float32Array.from({ length: 3003 }, (_, i) => (i % 13) / 13));
  g.addNode({ opType: "ReduceMean", inputs: ["input:0"], outputs: ["mean"], attributes: { axes: { kind: "INTS", value: [1, 2] }, keepdims: { kind: "INT", value: 0 } } });
  g.addNode({ opType: "MatMul", inputs: ["mean", "w"], outputs: ["logits"] });
  g.addNode({ opType: "Softmax", inputs: ["logits"], outputs: ["InceptionV3/Predictions/Softmax:0"] });
  g.addOutput("InceptionV3/Predictions/Softmax:0", "FLOAT", [1, 1001]);
  return g.toModelBytes({ opsetVersion: 13 });
}

function model(repository: string, name: string, config: string | undefined, versions: readonly number[] = [1]): void {
  const dir = path.join(repository, name);
  mkdirSync(dir, { recursive: true });
  if (config !== undefined) writeFileSync(path.join(dir, "config.pbtxt"), config);
  for (const version of versions) {
    mkdirSync(path.join(dir, String(version)), { recursive: true });
    copyFileSync(SIMPLE_ONNX, path.join(dir, String(version), "model.onnx"));
  }
}

const SIMPLE_IO = `max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 16 ] }, { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]`;

/** A repository with every Triton example config plus models that exercise each lifecycle rule. */
function buildRepository(): string {
  const repository = mkdtempSync(path.join(os.tmpdir(), "model-repo-test-"));
  cpSync(TRITON_CONFIGS, repository, { recursive: true });
  for (const [name, bytes] of [["densenet_onnx", densenetStandIn()], ["inception_onnx", inceptionStandIn()]] as const) {
    mkdirSync(path.join(repository, name, "1"));
    writeFileSync(path.join(repository, name, "1", "model.onnx"), bytes);
  }
  model(repository, "broken_config", "max_batch_size: 8\nbogus_field: 1\n");
  model(repository, "gpu_model", `platform: "onnxruntime_onnx"\n${SIMPLE_IO}\ninstance_group [ { count: 1 kind: KIND_GPU } ]`);
  model(repository, "too_large_batch", `platform: "onnxruntime_onnx"\nmax_batch_size: 8\ninput [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] } ]\noutput [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 16 ] } ]`);
  model(repository, "versions_latest", `platform: "onnxruntime_onnx"\n${SIMPLE_IO}`, [1, 2, 3]);
  model(repository, "versions_all", `platform: "onnxruntime_onnx"\n${SIMPLE_IO}\nversion_policy: { all { } }`, [1, 2, 3]);
  model(repository, "versions_specific", `platform: "onnxruntime_onnx"\n${SIMPLE_IO}\nversion_policy: { specific { versions: [ 1, 3 ] } }`, [1, 2, 3]);
  model(repository, "versions_specific_missing", `platform: "onnxruntime_onnx"\n${SIMPLE_IO}\nversion_policy: { specific { versions: [ 2, 5 ] } }`, [1, 2]);
  model(repository, "versions_specific_none", `platform: "onnxruntime_onnx"\n${SIMPLE_IO}\nversion_policy: { specific { versions: [ 7 ] } }`, [1]);
  // Config errors come before the missing version directory (Triton validates the config when it polls).
  model(repository, "no_version_bad_preferred", `platform: "onnxruntime_onnx"\n${SIMPLE_IO}\ndynamic_batching { preferred_batch_size: [ 16 ] }`, []);
  model(repository, "no_version_bad_priority", `platform: "onnxruntime_onnx"\n${SIMPLE_IO}\ndynamic_batching { priority_levels: 2 default_priority_level: 3 }`, []);
  model(repository, "no_version_bad_queue_policy", `platform: "onnxruntime_onnx"\n${SIMPLE_IO}\ndynamic_batching { priority_levels: 2 default_priority_level: 1 priority_queue_policy { key: 3 value: { max_queue_size: 1 } } }`, []);
  model(repository, "no_version", `platform: "onnxruntime_onnx"\n${SIMPLE_IO}`, []);
  model(repository, "no_config", undefined);
  model(repository, "three_instances", `platform: "onnxruntime_onnx"\n${SIMPLE_IO}\ninstance_group [ { count: 3 kind: KIND_CPU } ]`);
  mkdirSync(path.join(repository, "no_config", "0001"));
  return repository;
}

async function post(server: RunningServer, url: string, body: unknown): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${server.httpUrl}${url}`, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
  const text = await response.text();
  return { status: response.status, json: text ? JSON.parse(text) : undefined };
}

type IndexEntry = { name: string; version?: string; state: string; reason: string };

describe("model repository: Triton's layout, configs, versions and load failures", () => {
  let repository: string;
  let server: RunningServer;
  let index: IndexEntry[];
  beforeAll(async () => {
    repository = buildRepository();
    server = await startServer({ repository, args: ["--exit-on-error", "false"] });
    index = (await post(server, "/v2/repository/index", {})).json as IndexEntry[];
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(repository, { recursive: true, force: true });
  });

  const stateOf = (name: string, version?: string): IndexEntry | undefined =>
    index.find((e) => e.name === name && (version === undefined || e.version === version));

  it("serves every ONNX example config from Triton's repository", () => {
    for (const name of ["simple", "simple_int8", "simple_string", "simple_sequence", "simple_dyna_sequence", "densenet_onnx", "inception_onnx"]) {
      expect(stateOf(name), name).toMatchObject({ state: "READY" });
    }
  });

  it("parses the non-ONNX configs too, and reports why they cannot serve", () => {
    for (const name of ["inception_graphdef", "resnet50_graphdef", "resnet50_netdef", "image_preprocess_nchw_3x224x224_inception", "preprocess_resnet50_ensemble", "simple_identity"]) {
      const entry = stateOf(name);
      expect(entry, name).toMatchObject({ state: "UNAVAILABLE" });
      expect(entry!.reason, name).not.toMatch(/config\.pbtxt line/);
    }
  });

  it("marks a model with a bad config UNAVAILABLE with the line at fault, and keeps serving the rest", async () => {
    expect(stateOf("broken_config")).toMatchObject({ state: "UNAVAILABLE", reason: expect.stringMatching(/line 2: unknown field 'bogus_field'/) });
    const response = await fetch(`${server.httpUrl}/v2/models/broken_config/infer`, { method: "POST", body: "{}" });
    expect(response.status).toBe(503);
    expect(((await response.json()) as { error: string }).error).toMatch(/not ready: .*bogus_field/);
  });

  it("marks a KIND_GPU model UNAVAILABLE with a clear reason when the CUDA provider is absent", () => {
    expect(stateOf("gpu_model", "1")).toMatchObject({ state: "UNAVAILABLE", reason: expect.stringMatching(/CUDA execution provider.*not installed/) });
  });

  it("refuses a config that disagrees with the model file, in the words of Triton's ONNX Runtime backend (ValidateInputs)", () => {
    expect(stateOf("too_large_batch", "1")).toMatchObject({ state: "UNAVAILABLE", reason: "unable to load model 'too_large_batch', configuration expects 1 inputs, model provides 2" });
  });

  it("applies version policies: latest 1 by default, all, specific", () => {
    expect(index.filter((e) => e.name === "versions_latest").map((e) => e.version)).toEqual(["3"]);
    expect(index.filter((e) => e.name === "versions_all").map((e) => e.version)).toEqual(["1", "2", "3"]);
    expect(index.filter((e) => e.name === "versions_specific").map((e) => e.version)).toEqual(["1", "3"]);
  });

  it("loads the specific versions that have a directory and logs the others, as Triton's VersionsToLoad", () => {
    expect(index.filter((e) => e.name === "versions_specific_missing").map((e) => [e.version, e.state])).toEqual([["2", "READY"]]);
    expect(server.logs()).toContain("version 5 is specified for model 'versions_specific_missing', but the version directory is not present");
    expect(stateOf("versions_specific_none")).toMatchObject({
      state: "UNAVAILABLE", reason: "at least one version must be available under the version policy of model 'versions_specific_none'",
    });
  });

  it("reports config errors before a missing version directory, with Triton's messages", () => {
    expect(stateOf("no_version_bad_preferred")).toMatchObject({ state: "UNAVAILABLE", reason: "dynamic batching preferred size must be <= max batch size for no_version_bad_preferred" });
    expect(stateOf("no_version_bad_priority")).toMatchObject({ state: "UNAVAILABLE", reason: "default priority level must be in range [1, 2] for no_version_bad_priority" });
    expect(stateOf("no_version_bad_queue_policy")).toMatchObject({ state: "UNAVAILABLE", reason: "priority queue policy must have priority level in range [1, 2] for no_version_bad_queue_policy" });
    expect(stateOf("no_version")).toMatchObject({ state: "UNAVAILABLE", reason: "at least one version must be available under the version policy of model 'no_version'" });
  });

  it("serves a specific version and the highest one by default", async () => {
    const body = { inputs: [0, 1].map((i) => ({ name: `INPUT${i}`, datatype: "INT32", shape: [1, 16], data: Array(16).fill(1) })) };
    expect((await post(server, "/v2/models/versions_all/versions/2/infer", body)).json).toMatchObject({ model_version: "2" });
    expect((await post(server, "/v2/models/versions_all/infer", body)).json).toMatchObject({ model_version: "3" });
    expect((await post(server, "/v2/models/versions_specific/versions/2/infer", body)).status).toBe(404);
  });

  it("auto-completes a missing config from the ONNX model like Triton (max_batch_size 4, preferred_batch_size [4])", async () => {
    const config = (await (await fetch(`${server.httpUrl}/v2/models/no_config/config`)).json()) as Record<string, unknown>;
    expect(config).toMatchObject({
      name: "no_config", platform: "onnxruntime_onnx", backend: "onnxruntime", max_batch_size: 4,
      // Triton qa/L0_model_config/autofill_noplatform_success/onnx/no_config/expected: `preferred_batch_size: 4`.
      dynamic_batching: { preferred_batch_size: [4], max_queue_delay_microseconds: 0 },
      input: [{ name: "INPUT0", data_type: "TYPE_INT32", dims: [16] }, { name: "INPUT1", data_type: "TYPE_INT32", dims: [16] }],
      output: [{ name: "OUTPUT0", data_type: "TYPE_INT32", dims: [16] }, { name: "OUTPUT1", data_type: "TYPE_INT32", dims: [16] }],
      instance_group: [{ kind: "KIND_CPU", count: 2 }],
    });
    expect(index.filter((e) => e.name === "no_config").map((e) => e.version)).toEqual(["1"]); // "0001" is not a version
  });

  it("fills in /config the defaults Triton's NormalizeModelConfig writes", async () => {
    const config = async (model: string): Promise<Record<string, unknown>> => (await (await fetch(`${server.httpUrl}/v2/models/${model}/config`)).json()) as Record<string, unknown>;
    expect(await config("versions_latest")).toMatchObject({
      version_policy: { latest: { num_versions: 1 } }, default_model_filename: "model.onnx",
      optimization: { priority: "PRIORITY_DEFAULT", input_pinned_memory: { enable: true }, output_pinned_memory: { enable: true } },
      instance_group: [{ name: "versions_latest_0" }],
    });
    expect(await config("versions_all")).toMatchObject({ version_policy: { all: {} } });
    expect(await config("simple_sequence")).toMatchObject({ sequence_batching: { max_sequence_idle_microseconds: 1000000 } });
  });

  it("honours instance_group count", async () => {
    const config = (await (await fetch(`${server.httpUrl}/v2/models/three_instances/config`)).json()) as { instance_group: unknown[] };
    expect(config.instance_group).toEqual([expect.objectContaining({ kind: "KIND_CPU", count: 3 })]);
  });

  it("runs Triton's sequence models with server-filled control inputs", async () => {
    const input = (value: number): unknown => ({ name: "INPUT", datatype: "INT32", shape: [1, 1], data: [value] });
    expect((await post(server, "/v2/models/simple_sequence/infer", { parameters: { sequence_id: 5, sequence_start: true }, inputs: [input(5)] })).json)
      .toMatchObject({ outputs: [{ name: "OUTPUT", data: [6] }] });
    expect((await post(server, "/v2/models/simple_sequence/infer", { parameters: { sequence_id: 5 }, inputs: [input(5)] })).json)
      .toMatchObject({ outputs: [{ data: [5] }] });
    // README of the test data: INPUT 5, START 0, END 1, READY 1, CORRID 7 gives 12.
    await post(server, "/v2/models/simple_dyna_sequence/infer", { parameters: { sequence_id: 7, sequence_start: true }, inputs: [input(0)] });
    expect((await post(server, "/v2/models/simple_dyna_sequence/infer", { parameters: { sequence_id: 7, sequence_end: true }, inputs: [input(5)] })).json)
      .toMatchObject({ outputs: [{ data: [12] }] });
    const noStart = await post(server, "/v2/models/simple_dyna_sequence/infer", { parameters: { sequence_id: 7 }, inputs: [input(5)] });
    expect(noStart).toMatchObject({ status: 400, json: { error: expect.stringMatching(/must specify the START flag/) } });
    const noId = await post(server, "/v2/models/simple_sequence/infer", { inputs: [input(5)] });
    expect(noId).toMatchObject({ status: 400, json: { error: expect.stringMatching(/non-zero or non-empty correlation ID/) } });
  });

  it("serves the INT8 and BYTES variants of simple", async () => {
    const int8 = await post(server, "/v2/models/simple_int8/infer", { inputs: [0, 1].map((i) => ({ name: `INPUT${i}`, datatype: "INT8", shape: [1, 16], data: Array.from({ length: 16 }, (_, k) => k * (1 - i) + i) })) });
    expect(int8.json).toMatchObject({ outputs: [{ data: Array.from({ length: 16 }, (_, k) => k + 1) }, { data: Array.from({ length: 16 }, (_, k) => k - 1) }] });
    const strings = await post(server, "/v2/models/simple_string/infer", { inputs: [0, 1].map((i) => ({ name: `INPUT${i}`, datatype: "BYTES", shape: [1, 16], data: Array.from({ length: 16 }, (_, k) => String(i ? 1 : k)) })) });
    expect(strings.json).toMatchObject({ outputs: [{ datatype: "BYTES", data: Array.from({ length: 16 }, (_, k) => String(k + 1)) }, { data: Array.from({ length: 16 }, (_, k) => String(k - 1)) }] });
  });

  it("applies config reshape and label files on Triton's densenet_onnx config", async () => {
    const data = Array.from({ length: 3 * 224 * 224 }, (_, i) => (i % 97) / 97);
    const result = await post(server, "/v2/models/densenet_onnx/infer", {
      inputs: [{ name: "data_0", datatype: "FP32", shape: [3, 224, 224], data }],
      outputs: [{ name: "fc6_1", parameters: { classification: 2 } }],
    });
    expect(result.status).toBe(200);
    const output = (result.json as { outputs: { shape: number[]; data: string[] }[] }).outputs[0]!;
    expect(output.shape).toEqual([2]);
    expect(output.data[0]).toMatch(/^\d+\.\d{6}:\d+:[A-Z ]+/);
    const metadata = (await (await fetch(`${server.httpUrl}/v2/models/densenet_onnx`)).json()) as { inputs: { shape: number[] }[]; outputs: { shape: number[] }[] };
    expect(metadata.inputs[0]!.shape).toEqual([3, 224, 224]);
    expect(metadata.outputs[0]!.shape).toEqual([1000]);
  });

  it("is not ready under --strict-readiness while a model is UNAVAILABLE", async () => {
    expect((await fetch(`${server.httpUrl}/v2/health/ready`)).status).toBe(400);
    expect((await fetch(`${server.httpUrl}/v2/health/live`)).status).toBe(200);
  });
});

describe("startup and model control flags", () => {
  let repository: string;
  beforeAll(() => {
    repository = mkdtempSync(path.join(os.tmpdir(), "flags-repo-"));
    model(repository, "good", `platform: "onnxruntime_onnx"\n${SIMPLE_IO}`);
    model(repository, "bad", "max_batch_size: 8\nbogus_field: 1\n");
    model(repository, "unconfigured", undefined);
  });
  afterAll(() => rmSync(repository, { recursive: true, force: true }));

  it("exits non-zero under --exit-on-error (the default) when a model fails to load", async () => {
    const { code, output } = await runServerToExit(["--model-repository", repository, "--http-port", "0", "--allow-grpc", "false", "--allow-metrics", "false"]);
    expect(code).not.toBe(0);
    expect(output).toMatch(/failed to load all models: .*bad: .*bogus_field/);
  });

  it("keeps serving, neither live nor ready, under --exit-on-error false when the model repository does not exist (Triton)", async () => {
    // core src/server.cc: a repository manager that cannot be created leaves SERVER_FAILED_TO_INITIALIZE, which
    // IsLive and IsReady both answer false; qa/L0_lifecycle/lifecycle_test.py (test_parse_error_noexit) expects
    // exactly that over HTTP and gRPC, with the server's metadata still answered.
    const missing = path.join(repository, "no-such-repository");
    const server = await startServer({ repository: missing, args: ["--exit-on-error", "false"], services: ["http", "grpc"] });
    const grpc = new InferenceClient({ url: `grpc://${server.grpcAddress}` });
    try {
      expect((await fetch(`${server.httpUrl}/v2/health/live`)).status).toBe(400);
      expect((await fetch(`${server.httpUrl}/v2/health/ready`)).status).toBe(400);
      expect((await fetch(`${server.httpUrl}/v2`)).status).toBe(200);
      expect((await post(server, "/v2/repository/index", {})).json).toEqual([]);
      expect(await grpc.isServerLive()).toBe(false);
      expect(await grpc.isServerReady()).toBe(false);
      expect(await grpc.serverMetadata()).toMatchObject({ name: "triton" });
      expect(server.logs()).toMatch(/no-such-repository/);
    } finally {
      await grpc.close();
      await server.stop();
    }
  });

  it("is ready with --strict-readiness false despite an UNAVAILABLE model", async () => {
    const server = await startServer({ repository, args: ["--exit-on-error", "false", "--strict-readiness", "false"] });
    try {
      expect((await fetch(`${server.httpUrl}/v2/health/ready`)).status).toBe(200);
      expect((await fetch(`${server.httpUrl}/v2/models/good/ready`)).status).toBe(200);
      expect((await fetch(`${server.httpUrl}/v2/models/bad/ready`)).status).toBe(400);
    } finally {
      await server.stop();
    }
  });

  it("needs a config for every model under --disable-auto-complete-config", async () => {
    const server = await startServer({ repository, args: ["--exit-on-error", "false", "--disable-auto-complete-config"] });
    try {
      const index = (await post(server, "/v2/repository/index", {})).json as IndexEntry[];
      expect(index.find((e) => e.name === "unconfigured")).toMatchObject({ state: "UNAVAILABLE", reason: expect.stringMatching(/auto-complete is disabled/) });
      expect(index.find((e) => e.name === "good")).toMatchObject({ state: "READY" });
    } finally {
      await server.stop();
    }
  });

  it("loads and unloads on request in explicit model control mode", async () => {
    const server = await startServer({ repository, args: ["--model-control-mode", "explicit", "--load-model", "good"] });
    try {
      expect(((await post(server, "/v2/repository/index", { ready: true })).json as IndexEntry[]).map((e) => e.name)).toEqual(["good"]);
      expect((await post(server, "/v2/repository/models/unconfigured/load", {})).status).toBe(200);
      expect((await fetch(`${server.httpUrl}/v2/models/unconfigured/ready`)).status).toBe(200);
      const failed = await post(server, "/v2/repository/models/bad/load", {});
      expect(failed).toMatchObject({ status: 500, json: { error: expect.stringMatching(/^failed to load 'bad', failed to poll from model repository: .*bogus_field/) } });
      expect((await post(server, "/v2/repository/models/good/unload", {})).status).toBe(200);
      expect((await fetch(`${server.httpUrl}/v2/models/good/ready`)).status).toBe(400);
      expect((await post(server, "/v2/repository/index", {})).json).toContainEqual({ name: "good", state: "UNAVAILABLE", reason: "unloaded" });
    } finally {
      await server.stop();
    }
  });

  it("documents every Triton flag in --help", async () => {
    const { code, output } = await runServerToExit(["--help"]);
    expect(code).toBe(0);
    for (const flag of ["--model-repository", "--http-port", "--grpc-port", "--metrics-port", "--strict-readiness", "--exit-on-error", "--disable-auto-complete-config", "--log-verbose", "--http-max-input-size"]) {
      expect(output).toContain(flag);
    }
  });

  it("rejects a bad flag value with a clear message", async () => {
    const { code, output } = await runServerToExit(["--model-repository", repository, "--http-port", "99999"]);
    expect(code).not.toBe(0);
    expect(output).toMatch(/--http-port.*must be an integer in \[0, 65535\]/);
  });
});

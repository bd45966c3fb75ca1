import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Backend } from "../../../../server/backends/backend";
import { IdentityBackend } from "../../../../server/backends/identity-backend";
import { OnnxruntimeBackend } from "../../../../server/backends/onnxruntime/onnxruntime-backend";
import { InferenceCore, type ModelIndexEntry, type Tensor } from "../../../../server/core/index";
import { EXAMPLE_REPOSITORY } from "../../../helpers/server-process";
import { inferOn } from "../../../helpers/core-infer";

const SIMPLE_ONNX = path.join(EXAMPLE_REPOSITORY, "simple", "1", "model.onnx");
const SIMPLE_IO = `max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 16 ] label_filename: "labels.txt" }, { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]`;
const IDENTITY = (dims: string, maxBatchSize = 1): string => `backend: "identity"
max_batch_size: ${maxBatchSize}
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ ${dims} ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ ${dims} ] } ]`;
const SECRET = "root:x:0:0:secret-line-that-must-never-be-served";

let root: string;
let repository: string;
let outside: string;
let core: InferenceCore;
let index: ModelIndexEntry[];
const warnings: string[] = [];

/** `<repository>/<name>` as simple with labels, config and files given; returns the directory. */
function simpleModel(name: string, config = `platform: "onnxruntime_onnx"\n${SIMPLE_IO}`): string {
  const directory = path.join(repository, name);
  mkdirSync(path.join(directory, "1"), { recursive: true });
  writeFileSync(path.join(directory, "config.pbtxt"), config);
  writeFileSync(path.join(directory, "labels.txt"), Array.from({ length: 16 }, (_, i) => `class${i}`).join("\n"));
  copyFileSync(SIMPLE_ONNX, path.join(directory, "1", "model.onnx"));
  return directory;
}

function makeCore(modelSymlinks: "inside" | "any"): InferenceCore {
  return new InferenceCore({
    modelRepositories: [repository], serverName: "t", serverVersion: "0", strictReadiness: true, exitOnError: false,
    modelControlMode: "none", repositoryPollMs: 1000, responseCacheBytes: undefined, startupModels: [],
    log: { info: () => undefined, warn: (message) => warnings.push(message) },
    loader: {
      autoCompleteConfig: true, gpuCount: 0, cpuCount: 1, defaultMaxBatchSize: 4, intraOpThreads: 1, modelSymlinks, instanceRestart: { initialBackoffMs: 100, maxBackoffMs: 1000 },
      backends: new Map<string, Backend>([["onnxruntime", new OnnxruntimeBackend()], ["identity", new IdentityBackend()]]),
    },
  });
}

function simpleInputs(): Tensor[] {
  return ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: new Uint8Array(Int32Array.from({ length: 16 }, (_, i) => i).buffer) }));
}

function stateOf(name: string): ModelIndexEntry[] {
  return index.filter((entry) => entry.name === name);
}

function reasonOf(name: string): string {
  const entries = stateOf(name);
  expect(entries.length).toBeGreaterThan(0);
  expect(entries.every((entry) => entry.state === "UNAVAILABLE")).toBe(true);
  return entries.map((entry) => entry.reason).join("; ");
}

beforeAll(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), "repo-safety-"));
  repository = path.join(root, "models");
  outside = path.join(root, "outside");
  mkdirSync(repository);
  mkdirSync(path.join(outside, "m", "1"), { recursive: true });
  writeFileSync(path.join(outside, "passwd"), `${SECRET}\n`.repeat(16));
  copyFileSync(SIMPLE_ONNX, path.join(outside, "m", "1", "model.onnx"));
  writeFileSync(path.join(outside, "config.pbtxt"), `platform: "onnxruntime_onnx"\n${SIMPLE_IO}`);

  symlinkSync(path.join(outside, "passwd"), path.join(simpleModel("labels_out"), "labels.txt.out"));
  writeFileSync(path.join(repository, "labels_out", "config.pbtxt"), `platform: "onnxruntime_onnx"\n${SIMPLE_IO.replace("labels.txt", "labels.txt.out")}`);
  simpleModel("labels_dotdot", `platform: "onnxruntime_onnx"\n${SIMPLE_IO.replace("labels.txt", "../../outside/passwd")}`);
  simpleModel("filename_dotdot", `platform: "onnxruntime_onnx"\ndefault_model_filename: "../../../outside/m/1/model.onnx"\n${SIMPLE_IO}`);
  const modelOut = simpleModel("model_file_out");
  rmSync(path.join(modelOut, "1", "model.onnx"));
  symlinkSync(path.join(outside, "m", "1", "model.onnx"), path.join(modelOut, "1", "model.onnx"));
  const versionOut = simpleModel("version_dir_out");
  symlinkSync(path.join(outside, "m", "1"), path.join(versionOut, "2"));
  const configOut = simpleModel("config_out");
  rmSync(path.join(configOut, "config.pbtxt"));
  symlinkSync(path.join(outside, "config.pbtxt"), path.join(configOut, "config.pbtxt"));

  const warmupOut = simpleModel("warmup_out", `platform: "onnxruntime_onnx"\n${SIMPLE_IO}
model_warmup [ { name: "w" batch_size: 1 inputs [
  { key: "INPUT0" value: { data_type: TYPE_INT32 dims: [ 16 ] input_data_file: "in.bin" } },
  { key: "INPUT1" value: { data_type: TYPE_INT32 dims: [ 16 ] zero_data: true } } ] } ]`);
  mkdirSync(path.join(warmupOut, "warmup"));
  symlinkSync(path.join(outside, "passwd"), path.join(warmupOut, "warmup", "in.bin"));

  // Links that stay inside: a label file linked within its model, a model directory linked within the repository.
  const labelsInside = simpleModel("labels_linked_inside");
  rmSync(path.join(labelsInside, "labels.txt"));
  writeFileSync(path.join(labelsInside, "real-labels.txt"), Array.from({ length: 16 }, (_, i) => `linked${i}`).join("\n"));
  symlinkSync("real-labels.txt", path.join(labelsInside, "labels.txt"));
  simpleModel("target_inside");
  symlinkSync("target_inside", path.join(repository, "alias_inside"));
  mkdirSync(path.join(outside, "model_dir", "1"), { recursive: true });
  copyFileSync(SIMPLE_ONNX, path.join(outside, "model_dir", "1", "model.onnx"));
  symlinkSync(path.join(outside, "model_dir"), path.join(repository, "alias_outside"));
  symlinkSync(path.join(root, "nowhere"), path.join(repository, "alias_dangling"));

  for (const [name, config] of [["dims_negative", IDENTITY("-5")], ["dims_zero", IDENTITY("0")], ["batch_negative", IDENTITY("4", -1)],
    ["decoupled_sequence", `${IDENTITY("4")}\nmodel_transaction_policy { decoupled: true }\nsequence_batching { }`]] as const) {
    mkdirSync(path.join(repository, name, "1"), { recursive: true });
    writeFileSync(path.join(repository, name, "config.pbtxt"), config);
  }

  core = makeCore("inside");
  await core.start();
  index = core.repositoryIndex(false);
});

afterAll(async () => {
  await core?.close();
  rmSync(root, { recursive: true, force: true });
});

describe("model repository safety: nothing outside a model's directory is read", () => {
  it("refuses a label file that is a symlink to a file outside the model directory", () => {
    expect(reasonOf("labels_out")).toContain("label_filename 'labels.txt.out' resolves (through a symlink) outside the model directory");
  });

  it("refuses a label_filename with '..' that leaves the model directory", () => {
    expect(reasonOf("labels_dotdot")).toContain("label_filename '../../outside/passwd' points outside the model directory");
  });

  it("refuses a default_model_filename that leaves the model directory", () => {
    expect(reasonOf("filename_dotdot")).toContain("default_model_filename) points outside the model directory");
  });

  it("refuses a model file, a version directory or a config.pbtxt that is a symlink out", () => {
    expect(reasonOf("model_file_out")).toContain("model file '1/model.onnx' (default_model_filename) resolves (through a symlink) outside the model directory (--model-symlinks any follows such links)");
    expect(stateOf("version_dir_out")).toEqual([
      { name: "version_dir_out", version: "2", state: "UNAVAILABLE", reason: "model file '2/model.onnx' (default_model_filename) resolves (through a symlink) outside the model directory (--model-symlinks any follows such links)" },
    ]);
    expect(reasonOf("config_out")).toBe("config.pbtxt resolves (through a symlink) outside the model directory (--model-symlinks any follows such links)");
  });

  it("refuses a warmup input_data_file linked outside, without reading it (its size is not told)", () => {
    const reason = reasonOf("warmup_out");
    expect(reason).toContain("model_warmup sample 'w': input_data_file 'in.bin' resolves (through a symlink) outside the model directory");
    expect(reason).not.toMatch(/bytes/);
  });

  it("never serves the outside file's contents through classification", async () => {
    const answer = await inferOn(core, { modelName: "labels_out", inputs: simpleInputs(), outputs: [{ name: "OUTPUT0", classification: 1 }] })
      .then((response) => Buffer.from(response.outputs[0]!.data).toString(), (error: Error) => error.message);
    expect(answer).not.toContain("secret-line");
    expect(answer).toContain("'labels_out' has no available versions");
  });

  it("follows symlinks that stay inside: a linked label file, a model directory linked within the repository", async () => {
    expect(stateOf("labels_linked_inside")).toEqual([{ name: "labels_linked_inside", version: "1", state: "READY", reason: "" }]);
    const response = await inferOn(core, {
      modelName: "labels_linked_inside",
      inputs: simpleInputs(),
      outputs: [{ name: "OUTPUT0", classification: 1 }],
    });
    expect(Buffer.from(response.outputs[0]!.data.subarray(4)).toString()).toBe("30:15:linked15");
    expect(stateOf("alias_inside")).toEqual([{ name: "alias_inside", version: "1", state: "READY", reason: "" }]);
  });

  it("lists a model directory linked outside the repository, or dangling, as UNAVAILABLE with the reason", () => {
    expect(reasonOf("alias_outside")).toBe("the model directory is a symlink to a directory outside the model repository (--model-symlinks any follows such links)");
    expect(reasonOf("alias_dangling")).toBe("the model directory is a symlink that cannot be resolved: ENOENT");
  });
});

describe("--model-symlinks any: every symlink followed, as Triton does", () => {
  it("loads models whose files or directory link outside, and still refuses names that leave the directory", async () => {
    const trusting = makeCore("any");
    try {
      await trusting.start();
      const ready = (name: string): string[] => trusting.repositoryIndex(false).filter((e) => e.name === name).map((e) => e.state);
      for (const name of ["labels_out", "model_file_out", "config_out", "alias_outside"]) expect([name, ...ready(name)]).not.toContain("UNAVAILABLE");
      // The linked warmup file is read now; being /etc/passwd-like text, it has the wrong size for the input.
      expect(trusting.repositoryIndex(false).find((e) => e.name === "warmup_out")?.reason).toMatch(/warmup\/in.bin has \d+ bytes; input 'INPUT0'/);
      expect(ready("version_dir_out")).toEqual(["READY"]);
      expect(ready("filename_dotdot")).toEqual(["UNAVAILABLE"]);
    } finally {
      await trusting.close();
    }
  });
});

describe("config values no model can serve make it UNAVAILABLE with the real reason", () => {
  it("refuses dims below 1 other than -1, in Triton's words (ValidateIOShape)", () => {
    expect(reasonOf("dims_negative")).toBe("model input 'INPUT0' dimension must be integer >= 1, or -1 to indicate a variable-size dimension for dims_negative");
    expect(reasonOf("dims_zero")).toBe("model input 'INPUT0' dimension must be integer >= 1, or -1 to indicate a variable-size dimension for dims_zero");
  });

  it("refuses a negative max_batch_size, naming it", () => {
    expect(reasonOf("batch_negative")).toBe("'max_batch_size' must be non-negative value for batch_negative");
  });

  it("refuses a decoupled model with the sequence batcher, which this server cannot stream", () => {
    expect(reasonOf("decoupled_sequence")).toBe("model 'decoupled_sequence': a decoupled model (model_transaction_policy { decoupled: true }) with sequence_batching is not supported by this server");
  });
});

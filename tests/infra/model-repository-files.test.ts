import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { toGpuModelConfig } from "../../infra/global/gpu-model-config";
import { listModelRepositoryFiles } from "../../infra/global/model-repository-files";
import { FIXTURE_MODEL_REPOSITORY_DIR } from "./helpers/fixture-stack";

const KEYS = { sourceDirKey: "gpu-inference:modelRepository.sourceDir", modelsKey: "gpu-inference:modelRepository.models" };
const onnxConfig = (extra: string) => `name: "m"\nplatform: "onnxruntime_onnx"\nmax_batch_size: 8\n${extra}`;

describe("toGpuModelConfig", () => {
  it("moves CPU and AUTO instance groups of an ONNX model to the GPU", () => {
    const config = onnxConfig("instance_group [\n  { count: 2, kind: KIND_CPU },\n  { kind: KIND_AUTO }\n]\n");
    expect(toGpuModelConfig(config)).toBe(onnxConfig("instance_group [\n  { count: 2, kind: KIND_GPU },\n  { kind: KIND_GPU }\n]\n"));
  });

  it("adds one GPU instance group to an ONNX model that has none", () => {
    expect(toGpuModelConfig(`name: "m"\nbackend: "onnxruntime"\n\n`)).toBe(
      `name: "m"\nbackend: "onnxruntime"\ninstance_group [\n  {\n    count: 1\n    kind: KIND_GPU\n  }\n]\n`,
    );
  });

  it.each([
    ["identity backend", `name: "i"\nbackend: "identity"\ninstance_group [ { kind: KIND_CPU } ]\n`],
    ["ensemble", `name: "e"\nplatform: "ensemble"\n`],
  ])("leaves a non-ONNX model (%s) alone", (_kind, config) => {
    expect(toGpuModelConfig(config)).toBe(config);
  });
});

describe("listModelRepositoryFiles", () => {
  it("lists every file by object name, with model configs switched to the GPU", () => {
    const files = listModelRepositoryFiles(FIXTURE_MODEL_REPOSITORY_DIR, KEYS);
    expect(files.map((file) => file.objectName)).toEqual([
      "identity_fp32/config.pbtxt", "mlp/1/model.onnx", "mlp/config.pbtxt", "simple/1/model.onnx", "simple/config.pbtxt",
      "squeezenet/1/model.onnx", "squeezenet/config.pbtxt",
    ]);
    const byName = new Map(files.map((file) => [file.objectName, file]));
    expect(byName.get("mlp/1/model.onnx")).toEqual({ objectName: "mlp/1/model.onnx", localPath: path.join(FIXTURE_MODEL_REPOSITORY_DIR, "mlp", "1", "model.onnx") });
    expect(byName.get("mlp/config.pbtxt")?.content).toMatch(/kind: KIND_GPU/);
    expect(byName.get("simple/config.pbtxt")?.content).toMatch(/instance_group \[\n {2}\{\n {4}count: 1\n {4}kind: KIND_GPU/);
    expect(byName.get("identity_fp32/config.pbtxt")?.content).toBe(fs.readFileSync(path.join(FIXTURE_MODEL_REPOSITORY_DIR, "identity_fp32", "config.pbtxt"), "utf8"));
  });

  it("skips hidden folders, such as a build's staging directory, but keeps version placeholders", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "infra-models-"));
    try {
      fs.mkdirSync(path.join(dir, ".models.building-x", "m"), { recursive: true });
      fs.writeFileSync(path.join(dir, ".models.building-x", "m", "config.pbtxt"), "");
      fs.mkdirSync(path.join(dir, "m", "1"), { recursive: true });
      fs.writeFileSync(path.join(dir, "m", "1", "model.onnx"), "x");
      // A bucket has no empty folders: without its placeholder an identity-backend model would have no version.
      fs.mkdirSync(path.join(dir, "id", "1"), { recursive: true });
      fs.writeFileSync(path.join(dir, "id", "1", ".keep"), "");
      expect(listModelRepositoryFiles(dir, KEYS).map((file) => file.objectName)).toEqual(["id/1/.keep", "m/1/model.onnx"]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  // Issue 39, item 6: every pod loads every uploaded model and is ready only when all are.
  it("uploads only the models the stack names", () => {
    const files = listModelRepositoryFiles(FIXTURE_MODEL_REPOSITORY_DIR, { ...KEYS, models: ["mlp"] });
    expect(files.map((file) => file.objectName)).toEqual(["mlp/1/model.onnx", "mlp/config.pbtxt"]);
  });

  it("refuses a named model the repository does not have, listing the ones it has", () => {
    expect(() => listModelRepositoryFiles(FIXTURE_MODEL_REPOSITORY_DIR, { ...KEYS, models: ["mlp", "resnet50"] }))
      .toThrow(`gpu-inference:modelRepository.models names resnet50, which ${FIXTURE_MODEL_REPOSITORY_DIR} (gpu-inference:modelRepository.sourceDir) does not have; it has identity_fp32, mlp, simple, squeezenet`);
  });

  it("never serves the generated example repository whole: its test models must be named one by one", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "infra-example-models-"));
    try {
      fs.cpSync(FIXTURE_MODEL_REPOSITORY_DIR, dir, { recursive: true });
      fs.writeFileSync(path.join(dir, ".example-repository-stamp"), "stamp\n");
      expect(() => listModelRepositoryFiles(dir, KEYS)).toThrow(/is the generated example repository \(test models, most with random weights\): name the models the stack serves in gpu-inference:modelRepository\.models \(it has identity_fp32, mlp, simple, squeezenet\)/);
      expect(listModelRepositoryFiles(dir, { ...KEYS, models: ["simple"] }).map((file) => file.objectName)).toEqual(["simple/1/model.onnx", "simple/config.pbtxt"]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("says how to build the repository when it is missing", () => {
    expect(() => listModelRepositoryFiles("/no/such/models", KEYS))
      .toThrow("model repository /no/such/models (gpu-inference:modelRepository.sourceDir) does not exist: build the example repository with `npm run models`");
  });
});

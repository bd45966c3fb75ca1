import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Backend } from "../../../../server/backends/backend";
import { IdentityBackend } from "../../../../server/backends/identity-backend";
import { InferenceCore, type Tensor } from "../../../../server/core/index";
import { inferOn } from "../../../helpers/core-infer";

let repository: string;
let core: InferenceCore;

/** An identity model (OUTPUT0 = INPUT0, FP32) with `tensor` as the body of both tensors and `extra` config lines. */
function identity(name: string, tensor: string, extra = ""): void {
  mkdirSync(path.join(repository, name, "1"), { recursive: true });
  writeFileSync(path.join(repository, name, "config.pbtxt"), `backend: "identity"\nmax_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 ${tensor} } ]\noutput [ { name: "OUTPUT0" data_type: TYPE_FP32 ${tensor} ${extra} } ]`);
}

/** A one-step ensemble IN -> `model` -> OUT, `tensors` the body of IN and OUT. */
function ensemble(name: string, model: string, inputTensor: string, outputTensor = inputTensor): void {
  mkdirSync(path.join(repository, name, "1"), { recursive: true });
  writeFileSync(path.join(repository, name, "config.pbtxt"), `platform: "ensemble"\nmax_batch_size: 8
input [ { name: "IN" data_type: TYPE_FP32 ${inputTensor} } ]\noutput [ { name: "OUT" data_type: TYPE_FP32 ${outputTensor} } ]
ensemble_scheduling { step [ { model_name: "${model}" model_version: -1 input_map { key: "INPUT0" value: "IN" } output_map { key: "OUTPUT0" value: "OUT" } } ] }`);
}

function sixteen(name: string, shape: number[]): Tensor {
  return { name, datatype: "FP32", shape, data: new Uint8Array(Float32Array.from({ length: 16 }, (_, i) => i).buffer) };
}

beforeAll(async () => {
  repository = mkdtempSync(path.join(os.tmpdir(), "ensemble-steps-"));
  identity("labelled", "dims: [ 16 ]", `label_filename: "labels.txt"`);
  writeFileSync(path.join(repository, "labelled", "labels.txt"), Array.from({ length: 16 }, (_, i) => `label${i}`).join("\n"));
  ensemble("classify_through", "labelled", "dims: [ 16 ]");
  identity("flat", "dims: [ 16 ]");
  identity("square", "dims: [ 4, 4 ]");
  ensemble("square_in_flat", "flat", "dims: [ 4, 4 ] reshape: { shape: [ 16 ] }");
  ensemble("flat_in_square", "square", "dims: [ 16 ] reshape: { shape: [ 4, 4 ] }");
  core = new InferenceCore({
    modelRepositories: [repository], serverName: "t", serverVersion: "0", strictReadiness: true, exitOnError: false,
    modelControlMode: "none", repositoryPollMs: 1000, responseCacheBytes: undefined, startupModels: [],
    log: { info: () => undefined, warn: () => undefined },
    loader: {
      autoCompleteConfig: true, gpuCount: 0, cpuCount: 1, defaultMaxBatchSize: 4, intraOpThreads: 1, instanceRestart: { initialBackoffMs: 100, maxBackoffMs: 1000 },
      backends: new Map<string, Backend>([["identity", new IdentityBackend()]]),
    },
  });
  await core.start();
});

afterAll(async () => {
  await core.close();
  rmSync(repository, { recursive: true, force: true });
});

describe("classification of an ensemble output", () => {
  // Triton core src/model_repository_manager/model_lifecycle.cc: an ensemble output without labels of its own takes
  // the labels of the step output that produces it.
  it("uses the labels of the step model that produced the tensor", async () => {
    const response = await inferOn(core, { modelName: "classify_through", inputs: [sixteen("IN", [1, 16])], outputs: [{ name: "OUT", classification: 1 }] });
    expect(Buffer.from(response.outputs[0]!.data.subarray(4)).toString()).toBe("15.000000:15:label15");
  });
});

describe("ensemble tensors and a reshape", () => {
  // Triton: the ensemble's request holds an input in its `reshape` shape (core src/infer_request.cc), which the
  // steps receive (ensemble_scheduler.cc); the response reshapes an output back to its `dims` (infer_response.cc).
  it.each([
    ["square_in_flat", [1, 4, 4]],
    ["flat_in_square", [1, 16]],
  ])("%s passes its inputs to the step in their reshape shape and answers in its dims", async (model, shape) => {
    const response = await inferOn(core, { modelName: model, inputs: [sixteen("IN", shape)], outputs: [{ name: "OUT" }] });
    expect(response.outputs[0]).toMatchObject({ name: "OUT", shape });
    expect([...new Float32Array(response.outputs[0]!.data.slice().buffer)]).toEqual(Array.from({ length: 16 }, (_, i) => i));
  });
});

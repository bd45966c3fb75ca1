import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InferenceClient } from "../../client/index";
import type { DataType } from "../../protocol/datatypes";
import { nopOnnxModel } from "../../tools/model-builder/index";
import { type RunningServer, SHARED_DATA, startServer } from "../helpers/server-process";
import { writeSimpleModel } from "../helpers/simple-model";


/** Triton's `simple`: OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1 over INT32[16], batching up to 8. */
function addSub(repository: string, name: string, maxBatchSize = 8): void {
  writeSimpleModel(repository, name, `max_batch_size: ${maxBatchSize}\ndynamic_batching { }`);
}

const io = (kind: "input" | "output", names: string[], type = "TYPE_INT32", dims = "16"): string =>
  `${kind} [ ${names.map((n) => `{ name: "${n}" data_type: ${type} dims: [ ${dims} ] }`).join(", ")} ]`;

const step = (model: string, inputs: Record<string, string>, outputs: Record<string, string>): string => `{
  model_name: "${model}" model_version: -1
  ${Object.entries(inputs).map(([k, v]) => `input_map { key: "${k}" value: "${v}" }`).join(" ")}
  ${Object.entries(outputs).map(([k, v]) => `output_map { key: "${k}" value: "${v}" }`).join(" ")}
}`;

/** Triton's QA `nop` model: OUTPUT0 = INPUT0 of `type` with config `dims`, and `reshape` on both when given. */
function nop(repository: string, name: string, maxBatchSize: number, dims: string, type: DataType = "FP32", reshape?: string): void {
  mkdirSync(path.join(repository, name, "1"), { recursive: true });
  const rank = (reshape ?? dims).split(",").length + (maxBatchSize > 0 ? 1 : 0);
  writeFileSync(path.join(repository, name, "1", "model.onnx"), nopOnnxModel(name, type, rank));
  const tensor = (tensorName: string): string => `{ name: "${tensorName}" data_type: TYPE_${type} dims: [ ${dims} ]${reshape === undefined ? "" : ` reshape: { shape: [ ${reshape} ] }`} }`;
  writeFileSync(path.join(repository, name, "config.pbtxt"), `platform: "onnxruntime_onnx"\nmax_batch_size: ${maxBatchSize}
input [ ${tensor("INPUT0")} ]\noutput [ ${tensor("OUTPUT0")} ]`);
}

function ensemble(repository: string, name: string, body: string, maxBatchSize = 8): void {
  mkdirSync(path.join(repository, name, "1"), { recursive: true });
  writeFileSync(path.join(repository, name, "config.pbtxt"), `platform: "ensemble"\nmax_batch_size: ${maxBatchSize}\n${body}`);
}

/** 2A and 2B through two chained steps ((A+B)+(A-B), (A+B)-(A-B)), and A+A from a third step beside the first. */
const CHAIN = `${io("input", ["A", "B"])}
${io("output", ["TWICE_A", "TWICE_B", "DOUBLE_A"])}
ensemble_scheduling { step [
  ${step("add_sub", { INPUT0: "A", INPUT1: "B" }, { OUTPUT0: "sum", OUTPUT1: "diff" })},
  ${step("add_sub", { INPUT0: "sum", INPUT1: "diff" }, { OUTPUT0: "TWICE_A", OUTPUT1: "TWICE_B" })},
  ${step("add_sub", { INPUT0: "A", INPUT1: "A" }, { OUTPUT0: "DOUBLE_A" })}
] }`;

type IndexEntry = { name: string; version?: string; state: string; reason: string };
type Output = { name: string; shape: number[]; data: number[] };

function buildRepository(): string {
  const repository = mkdtempSync(path.join(os.tmpdir(), "ensemble-repo-"));
  addSub(repository, "add_sub");
  addSub(repository, "add_sub_small", 2);
  ensemble(repository, "chain", CHAIN);
  ensemble(repository, "any_length", `${io("input", ["A", "B"], "TYPE_INT32", "-1")}\n${io("output", ["S"], "TYPE_INT32", "-1")}
ensemble_scheduling { step [ ${step("add_sub", { INPUT0: "A", INPUT1: "B" }, { OUTPUT0: "S" })} ] }`);
  cpSync(path.join(SHARED_DATA, "triton-configs", "simple_sequence"), path.join(repository, "simple_sequence"), { recursive: true });
  ensemble(repository, "counter", `${io("input", ["X"], "TYPE_INT32", "1")}\n${io("output", ["Y"], "TYPE_INT32", "1")}
ensemble_scheduling { step [ ${step("simple_sequence", { INPUT: "X" }, { OUTPUT: "Y" })} ] }`);
  // Triton's batch/non-batch pairs (its L0_ensemble_* QA models): nop_TYPE_FP32_-1 batches, the others do not.
  nop(repository, "nop_TYPE_FP32_-1", 8, "-1");
  nop(repository, "nop_nobatch_2d", 0, "-1, -1");
  nop(repository, "nop_nobatch_16", 0, "16");
  const nopStep = (model: string, input: string, output: string): string => step(model, { INPUT0: input }, { OUTPUT0: output });
  ensemble(repository, "nobatch_to_batch", `${io("input", ["IN"], "TYPE_FP32", "-1")}\n${io("output", ["OUT"], "TYPE_FP32", "-1")}
ensemble_scheduling { step [ ${nopStep("nop_TYPE_FP32_-1", "IN", "OUT")} ] }`, 0);
  ensemble(repository, "batch_to_nobatch", `${io("input", ["IN"], "TYPE_FP32", "16")}\n${io("output", ["OUT"], "TYPE_FP32", "16")}
ensemble_scheduling { step [ ${nopStep("nop_nobatch_2d", "IN", "mid")}, ${nopStep("nop_TYPE_FP32_-1", "mid", "OUT")} ] }`);
  ensemble(repository, "batch_to_nobatch_row", `${io("input", ["IN"], "TYPE_FP32", "16")}\n${io("output", ["OUT"], "TYPE_FP32", "16")}
ensemble_scheduling { step [ ${nopStep("nop_nobatch_16", "IN", "OUT")} ] }`);
  // Triton's reshape QA models: a fixed reshape, and one whose -1 takes the request's variable size.
  nop(repository, "reshape_fixed", 8, "16", "FP32", "4, 4");
  nop(repository, "reshape_variable", 8, "-1", "FP32", "-1, 1");
  ensemble(repository, "through_reshapes", `${io("input", ["IN"], "TYPE_FP32", "16")}\n${io("output", ["OUT"], "TYPE_FP32", "16")}
ensemble_scheduling { step [ ${nopStep("reshape_fixed", "IN", "mid")}, ${nopStep("reshape_variable", "mid", "OUT")} ] }`);
  ensemble(repository, "optional_feed", `input [ { name: "IN" data_type: TYPE_FP32 dims: [ 16 ] }, { name: "OPT" data_type: TYPE_FP32 dims: [ 16 ] optional: true } ]
${io("output", ["OUT", "OUT2"], "TYPE_FP32", "16")}
ensemble_scheduling { step [ ${nopStep("nop_TYPE_FP32_-1", "IN", "OUT")}, ${nopStep("nop_TYPE_FP32_-1", "OPT", "OUT2")} ] }`);
  const broken = (name: string, body: string, maxBatchSize?: number): void => ensemble(repository, name, body, maxBatchSize);
  broken("unknown_model", `${io("input", ["A", "B"])}\n${io("output", ["S"])}\nensemble_scheduling { step [ ${step("nowhere", { INPUT0: "A", INPUT1: "B" }, { OUTPUT0: "S" })} ] }`);
  broken("bad_input_name", `${io("input", ["A", "B"])}\n${io("output", ["S"])}\nensemble_scheduling { step [ ${step("add_sub", { INPUT0: "A", INPUT9: "B" }, { OUTPUT0: "S" })} ] }`);
  broken("bad_output_name", `${io("input", ["A", "B"])}\n${io("output", ["S"])}\nensemble_scheduling { step [ ${step("add_sub", { INPUT0: "A", INPUT1: "B" }, { OUTPUT7: "S" })} ] }`);
  broken("wrong_shape", `${io("input", ["A", "B"], "TYPE_INT32", "4")}\n${io("output", ["S"])}\nensemble_scheduling { step [ ${step("add_sub", { INPUT0: "A", INPUT1: "B" }, { OUTPUT0: "S" })} ] }`);
  broken("wrong_step_shape", `${io("input", ["IN"], "TYPE_FP32", "16")}\n${io("output", ["OUT"], "TYPE_FP32", "8")}
ensemble_scheduling { step [ ${step("nop_nobatch_16", { INPUT0: "IN" }, { OUTPUT0: "OUT" })} ] }`, 0);
  broken("unfed_input", `${io("input", ["A"])}\n${io("output", ["S"])}\nensemble_scheduling { step [ ${step("add_sub", { INPUT0: "A" }, { OUTPUT0: "S" })} ] }`);
  broken("unproduced_output", `${io("input", ["A", "B"])}\n${io("output", ["S", "T"])}\nensemble_scheduling { step [ ${step("add_sub", { INPUT0: "A", INPUT1: "B" }, { OUTPUT0: "S" })} ] }`);
  broken("cycle", `${io("input", ["A"])}\n${io("output", ["S"])}\nensemble_scheduling { step [
    ${step("add_sub", { INPUT0: "A", INPUT1: "y" }, { OUTPUT0: "x" })}, ${step("add_sub", { INPUT0: "x", INPUT1: "A" }, { OUTPUT0: "y", OUTPUT1: "S" })} ] }`);
  broken("wrong_type", `${io("input", ["A", "B"], "TYPE_FP32")}\n${io("output", ["S"])}\nensemble_scheduling { step [ ${step("add_sub", { INPUT0: "A", INPUT1: "B" }, { OUTPUT0: "S" })} ] }`);
  broken("too_wide", `${io("input", ["A", "B"])}\n${io("output", ["S"])}\nensemble_scheduling { step [ ${step("add_sub_small", { INPUT0: "A", INPUT1: "B" }, { OUTPUT0: "S" })} ] }`, 4);
  return repository;
}

const row = (seed: number): number[] => Array.from({ length: 16 }, (_, i) => seed + i);

describe("ensemble models (platform \"ensemble\", ensemble_scheduling)", () => {
  let repository: string;
  let server: RunningServer;

  const post = (url: string, body: unknown = {}): Promise<Response> => fetch(`${server.httpUrl}${url}`, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
  const infer = async (model: string, body: unknown): Promise<{ status: number; outputs: Output[]; error?: string }> => {
    const response = await post(`/v2/models/${model}/infer`, body);
    const json = (await response.json()) as { outputs?: Output[]; error?: string };
    return { status: response.status, outputs: json.outputs ?? [], error: json.error };
  };
  type Stats = {
    inference_count: number; execution_count: number; last_inference: number;
    inference_stats: { success: { count: number } }; batch_stats: { batch_size: number; compute_infer: { count: number } }[];
  };
  const stats = async (model: string): Promise<Stats> =>
    ((await (await fetch(`${server.httpUrl}/v2/models/${model}/stats`)).json()) as { model_stats: Stats[] }).model_stats[0]!;

  beforeAll(async () => {
    repository = buildRepository();
    server = await startServer({ repository, services: ["http", "grpc"], args: ["--exit-on-error", "false", "--strict-readiness", "false", "--model-control-mode", "explicit", "--load-model", "*"] });
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(repository, { recursive: true, force: true });
  });

  it("runs chained and side-by-side steps and answers with the ensemble's outputs, row by row", async () => {
    const a = [row(1), row(100)];
    const b = [row(7), row(-50)];
    const { status, outputs } = await infer("chain", {
      inputs: [{ name: "A", datatype: "INT32", shape: [2, 16], data: a.flat() }, { name: "B", datatype: "INT32", shape: [2, 16], data: b.flat() }],
    });
    expect(status).toBe(200);
    const twice = (rows: number[][]): number[] => rows.flat().map((v) => 2 * v);
    expect(outputs.map((o) => o.name).sort()).toEqual(["DOUBLE_A", "TWICE_A", "TWICE_B"]);
    expect(outputs.find((o) => o.name === "TWICE_A")).toMatchObject({ shape: [2, 16], data: twice(a) });
    expect(outputs.find((o) => o.name === "TWICE_B")).toMatchObject({ shape: [2, 16], data: twice(b) });
    expect(outputs.find((o) => o.name === "DOUBLE_A")).toMatchObject({ shape: [2, 16], data: twice(a) });
  });

  it("shows Triton's defaults for an ensemble in /config: version_policy and a model_transaction_policy, no instance groups", async () => {
    const config = (await (await fetch(`${server.httpUrl}/v2/models/chain/config`)).json()) as Record<string, unknown>;
    expect(config).toMatchObject({ version_policy: { latest: { num_versions: 1 } }, model_transaction_policy: { decoupled: false }, instance_group: [] });
    expect(config).not.toHaveProperty("optimization");
  });

  it("reports itself as an ensemble, and each step counts as a request of its composing model", async () => {
    const metadata = (await (await fetch(`${server.httpUrl}/v2/models/chain`)).json()) as { platform: string; inputs: { name: string; shape: number[] }[] };
    expect(metadata).toMatchObject({ platform: "ensemble", inputs: [{ name: "A", shape: [-1, 16] }, { name: "B", shape: [-1, 16] }] });
    const [before, chainBefore] = [await stats("add_sub"), await stats("chain")];
    const { status, outputs } = await infer("chain", {
      inputs: [{ name: "A", datatype: "INT32", shape: [1, 16], data: row(3) }, { name: "B", datatype: "INT32", shape: [1, 16], data: row(4) }],
      outputs: [{ name: "TWICE_B" }],
    });
    expect(status).toBe(200);
    expect(outputs.map((o) => o.name)).toEqual(["TWICE_B"]);
    expect((await stats("add_sub")).inference_stats.success.count).toBe(before.inference_stats.success.count + 3);
    expect((await stats("chain")).inference_stats.success.count).toBe(chainBefore.inference_stats.success.count + 1);
  });

  const fp32 = (shape: number[], data: number[]): unknown => ({ inputs: [{ name: "IN", datatype: "FP32", shape, data }] });

  it("gives a non-batching ensemble's tensor the batch dimension a batching step needs, and takes it away again", async () => {
    expect(await infer("nobatch_to_batch", fp32([16], row(1)))).toMatchObject({ status: 200, outputs: [{ name: "OUT", shape: [16], data: row(1) }] });
    // Zero-sized: [0] reaches the step as [1,0].
    expect(await infer("nobatch_to_batch", fp32([0], []))).toMatchObject({ status: 200, outputs: [{ name: "OUT", shape: [0], data: [] }] });
  });

  it("loads and serves a batching ensemble whose steps do not batch, as Triton does", async () => {
    // The whole batch goes to a non-batching step whose dims take it as it is...
    const two = [...row(1), ...row(40)];
    expect(await infer("batch_to_nobatch", fp32([2, 16], two))).toMatchObject({ status: 200, outputs: [{ name: "OUT", shape: [2, 16], data: two }] });
    // ...or, as a batch of 1, without its batch dimension where the step's dims want that.
    expect(await infer("batch_to_nobatch_row", fp32([1, 16], row(5)))).toMatchObject({ status: 200, outputs: [{ name: "OUT", shape: [1, 16], data: row(5) }] });
    const wider = await infer("batch_to_nobatch_row", fp32([2, 16], two));
    expect(wider.status).toBe(400);
    expect(wider.error).toMatch(/^in ensemble 'batch_to_nobatch_row', unexpected shape for input 'INPUT0' for model 'nop_nobatch_16'/);
  });

  it("runs steps through models with reshape, a reshape's -1 taking the request's variable size (Triton's rule)", async () => {
    const five = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    const direct = await infer("reshape_variable", { inputs: [{ name: "INPUT0", datatype: "FP32", shape: [2, 5], data: five }] });
    expect(direct).toMatchObject({ status: 200, outputs: [{ name: "OUTPUT0", shape: [2, 5], data: five }] });
    const two = [...row(1), ...row(30)];
    expect(await infer("through_reshapes", fp32([2, 16], two))).toMatchObject({ status: 200, outputs: [{ name: "OUT", shape: [2, 16], data: two }] });
  });

  it("counts its own inferences, executions, batch sizes and last inference, as Triton's statistics do", async () => {
    const [before, batchedBefore] = [await stats("nobatch_to_batch"), await stats("batch_to_nobatch")];
    const startMs = Date.now();
    expect((await infer("nobatch_to_batch", fp32([16], row(1)))).status).toBe(200);
    expect((await infer("batch_to_nobatch", fp32([2, 16], [...row(1), ...row(2)]))).status).toBe(200);
    const after = await stats("nobatch_to_batch");
    // A non-batching ensemble's request counts as a batch of 1.
    expect(after).toMatchObject({ inference_count: before.inference_count + 1, execution_count: before.execution_count + 1 });
    expect(after.last_inference).toBeGreaterThanOrEqual(startMs);
    expect(after.batch_stats.find((b) => b.batch_size === 1)?.compute_infer.count).toBe(after.execution_count);
    const batched = await stats("batch_to_nobatch");
    expect(batched).toMatchObject({ inference_count: batchedBefore.inference_count + 2, execution_count: batchedBefore.execution_count + 1 });
    expect(batched.batch_stats.find((b) => b.batch_size === 2)?.compute_infer.count).toBeGreaterThanOrEqual(1);
    // A failed request is no execution.
    const failed = await stats("batch_to_nobatch_row");
    expect((await infer("batch_to_nobatch_row", fp32([2, 16], [...row(1), ...row(2)]))).status).toBe(400);
    expect(await stats("batch_to_nobatch_row")).toMatchObject({ inference_count: failed.inference_count, execution_count: failed.execution_count });
  });

  it("answers a step's refusal as Triton's FinishEnsemble words it: the ensemble's name, then the step's error quoting the request's id", async () => {
    const inputs = [{ name: "A", datatype: "INT32", shape: [1, 3], data: [1, 2, 3] }, { name: "B", datatype: "INT32", shape: [1, 3], data: [1, 2, 3] }];
    const { status, error } = await infer("any_length", { inputs });
    expect(status).toBe(400);
    // core src/ensemble_scheduler/ensemble_scheduler.cc: "in ensemble '" + ensemble_name + "', " + the step's status.
    expect(error).toMatch(/^in ensemble 'any_length', unexpected shape for input 'INPUT0' for model 'add_sub'\. Expected \[-1,16\], got \[1,3\]\. NOTE: /);
    // The step request carries the ensemble request's id (EnsembleContext::InitStep), so its error is prefixed with it.
    const withId = await infer("any_length", { id: "ens-7", inputs });
    expect(withId.error).toMatch(/^in ensemble 'any_length', \[request id: ens-7\] unexpected shape for input 'INPUT0' for model 'add_sub'/);
  });

  it("fails a request whose left-out optional input leaves a step unable to run, in Triton's words", async () => {
    // core src/ensemble_scheduler/ensemble_scheduler.cc, EnsembleContext::FinishEnsemble.
    const { status, error } = await infer("optional_feed", { id: "opt-1", inputs: [{ name: "IN", datatype: "FP32", shape: [1, 16], data: row(1) }] });
    expect(status).toBe(400);
    expect(error).toBe("in ensemble 'optional_feed', [request id: opt-1] unexpected deadlock, at least one output is not set while no more ensemble steps can be made");
  });

  it("hands each step the request's parameters, so a sequence model among the steps sees its sequence; the ensemble counts its own statistics", async () => {
    const x = (value: number): unknown => ({ name: "X", datatype: "INT32", shape: [1, 1], data: [value] });
    const before = await stats("counter");
    // The same answers as simple_sequence called directly (see the model repository tests).
    expect(await infer("counter", { parameters: { sequence_id: 11, sequence_start: true }, inputs: [x(5)] })).toMatchObject({ status: 200, outputs: [{ name: "Y", data: [6] }] });
    expect(await infer("counter", { parameters: { sequence_id: 11 }, inputs: [x(5)] })).toMatchObject({ status: 200, outputs: [{ data: [5] }] });
    const noSequence = await infer("counter", { inputs: [x(5)] });
    expect(noSequence.status).toBe(400);
    expect(noSequence.error).toMatch(/^in ensemble 'counter', .*sequence/);
    const after = await stats("counter");
    expect(after.inference_count - before.inference_count).toBe(2);
    expect(after.execution_count - before.execution_count).toBe(2);
    expect(after.inference_stats.success.count - before.inference_stats.success.count).toBe(2);
    expect(after.last_inference).toBeGreaterThan(0);
  });

  it("refuses at load what Triton refuses, with Triton's messages: unknown models, unmapped or unknown tensors, outputs not written, cycles, type, shape and batch mismatches", async () => {
    const index = (await (await post("/v2/repository/index")).json()) as IndexEntry[];
    const reason = (name: string): string | undefined => index.find((e) => e.name === name && e.version === "1")?.reason;
    expect(reason("bad_input_name")).toBe("in ensemble bad_input_name, ensemble tensor B is mapping to non-existing input INPUT9 in model add_sub");
    expect(reason("bad_output_name")).toBe("in ensemble bad_output_name, ensemble tensor S is mapped from non-existing output OUTPUT7 in model add_sub");
    expect(reason("unfed_input")).toBe("in ensemble unfed_input, input INPUT1 in model add_sub is not mapped to any ensemble tensors");
    // Triton's config checks (core src/model_config_utils.cc, ValidateEnsembleSchedulingConfig) fail the model as a
    // whole before any version, so their rows name no version.
    const modelReason = (name: string): string | undefined => index.find((e) => e.name === name)?.reason;
    // Triton's dependency graph (model_repository_manager.cc, UpdateGraph) fails it as a whole too.
    expect(modelReason("unknown_model")).toBe("ensemble unknown_model contains models that are not available or ambiguous: nowhere");
    expect(modelReason("unproduced_output")).toBe("ensemble output 'T' for ensemble unproduced_output' is not used");
    expect(modelReason("cycle")).toBe("output 'S' for ensemble 'cycle' is not written: at least one of its depending tensors, 'y', is not connected");
    expect(reason("wrong_type")).toBe("in ensemble wrong_type, ensemble tensor A: inconsistent data type: TYPE_FP32 is inferred from model wrong_type while TYPE_INT32 is inferred from model add_sub");
    expect(reason("wrong_shape")).toBe("in ensemble wrong_shape, ensemble tensor A: inconsistent shape: [-1,4] is inferred from model wrong_shape while [-1,16] is inferred from model add_sub");
    expect(reason("wrong_step_shape")).toBe("in ensemble wrong_step_shape, ensemble tensor OUT: inconsistent shape: [8] is inferred from model wrong_step_shape while [16] is inferred from model nop_nobatch_16");
    expect(reason("too_wide")).toBe("ensemble too_wide allows maximum batch size 4, but it contains model add_sub_small which only allows maximum batch size to be 2");
  });

  it("loads its composing models first; unloading one unloads the ensembles using it, UNAVAILABLE with Triton's reason", async () => {
    expect((await post("/v2/repository/models/add_sub/unload")).status).toBe(200);
    const body = { inputs: [{ name: "A", datatype: "INT32", shape: [1, 16], data: row(0) }, { name: "B", datatype: "INT32", shape: [1, 16], data: row(0) }] };
    const reason = "ensemble 'chain' depends on 'add_sub' which has no loaded version.";
    const gone = await infer("chain", body);
    expect(gone.status).toBe(503);
    expect(gone.error).toContain(reason);
    const unloaded = (await (await post("/v2/repository/index")).json()) as IndexEntry[];
    expect(unloaded.find((e) => e.name === "chain")).toEqual({ name: "chain", state: "UNAVAILABLE", reason });
    expect(unloaded.find((e) => e.name === "any_length")).toMatchObject({ state: "UNAVAILABLE", reason: "ensemble 'any_length' depends on 'add_sub' which has no loaded version." });
    expect((await post("/v2/repository/models/chain/load")).status).toBe(200);
    const index = (await (await post("/v2/repository/index")).json()) as IndexEntry[];
    expect(index.find((e) => e.name === "add_sub")).toMatchObject({ state: "READY" });
    expect((await infer("chain", body)).status).toBe(200);
  });

  it("unload_dependents also unloads the step models loaded along with an ensemble, and no model another ensemble uses", async () => {
    const ready = async (model: string): Promise<boolean> => (await fetch(`${server.httpUrl}/v2/models/${model}/ready`)).status === 200;
    // add_sub was loaded along with chain by the previous test; any_length, loaded again, uses it too.
    expect((await post("/v2/repository/models/any_length/load")).status).toBe(200);
    const wrongType = await post("/v2/repository/models/any_length/unload", { parameters: { unload_dependents: "yes" } });
    expect(wrongType.status).toBe(400);
    expect(((await wrongType.json()) as { error: string }).error).toBe("Unable to parse 'unload_dependents': expected a boolean");
    expect((await post("/v2/repository/models/any_length/unload", { parameters: { unload_dependents: true } })).status).toBe(200);
    expect(await ready("any_length")).toBe(false);
    expect(await ready("add_sub")).toBe(true);
    expect((await post("/v2/repository/models/chain/unload", { parameters: { unload_dependents: true } })).status).toBe(200);
    expect(await ready("chain")).toBe(false);
    expect(await ready("add_sub")).toBe(false);
    expect(await ready("simple_sequence")).toBe(true);
  });

  it.each(["http", "grpc"] as const)("InferenceClient over %s unloads an ensemble's steps only when asked to (unloadDependents)", async (protocol) => {
    const client = new InferenceClient({ url: protocol === "http" ? server.httpUrl : `grpc://${server.grpcAddress}` });
    try {
      await client.loadModel("chain");
      await client.unloadModel("chain");
      expect(await client.isModelReady("add_sub")).toBe(true);
      await client.loadModel("chain");
      await client.unloadModel("chain", { unloadDependents: true });
      expect(await client.isModelReady("chain")).toBe(false);
      expect(await client.isModelReady("add_sub")).toBe(false);
    } finally {
      await client.close();
    }
  });
});

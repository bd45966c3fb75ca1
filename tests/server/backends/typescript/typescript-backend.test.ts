import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BackendInstance, BackendRequest, BackendResponse, BackendTensor, InstanceSpec, TensorMap } from "../../../../server/backends/backend";
import { TypeScriptBackend } from "../../../../server/backends/typescript/typescript-backend";
import { executeRequests, type TestRequest } from "../../../helpers/backend-execution";
import { joinBytesElements } from "../../../../protocol/tensor-bytes";
import { writeProbeModel } from "../../../helpers/typescript-test-models";

const backend = new TypeScriptBackend();
let repository: string;
const instances: BackendInstance[] = [];

function spec(model: string, parameters: Record<string, string> = {}): InstanceSpec {
  const modelDirectory = path.join(repository, model);
  return {
    modelName: model, modelVersion: 1, modelPath: path.join(modelDirectory, "1", "model.js"), modelDirectory,
    modelConfig: { name: model, max_batch_size: 8, parameters: Object.fromEntries(Object.entries(parameters).map(([k, v]) => [k, { string_value: v }])) },
    instanceName: `${model}_0`, device: "cpu", deviceId: 0, accelerators: [], parameters, intraOpThreads: 1, graphOptimizationLevel: 0,
  };
}

async function start(model: string, parameters: Record<string, string> = {}): Promise<BackendInstance> {
  const instance = await backend.createInstance(spec(model, parameters));
  instances.push(instance);
  return instance;
}

const bytes = (view: ArrayBufferView): Uint8Array => new Uint8Array(view.buffer.slice(view.byteOffset, view.byteOffset + view.byteLength));
const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

function request(inputs: Record<string, BackendTensor>, parameters: BackendRequest["parameters"] = {}): TestRequest {
  return { inputs: new Map(Object.entries(inputs)), parameters, requestedOutputs: ["OUTPUT0", "INFO"] };
}

const fp32 = (values: number[]): BackendTensor => ({ datatype: "FP32", shape: [1, values.length], data: bytes(Float32Array.from(values)) });

function outputsOf(response: BackendResponse | undefined): TensorMap {
  if (response === undefined || "error" in response) throw new Error(`expected outputs, got ${JSON.stringify(response)}`);
  return response.outputs;
}

function infoOf(response: BackendResponse | undefined): Record<string, unknown> {
  const info = outputsOf(response).get("INFO")!;
  return JSON.parse(Buffer.from(info.data.subarray(4)).toString()) as Record<string, unknown>;
}

beforeAll(() => {
  repository = mkdtempSync(path.join(os.tmpdir(), "typescript-backend-"));
  writeProbeModel(repository, { name: "probe" });
  writeProbeModel(repository, { name: "broken_init" });
  mkdirSync(path.join(repository, "no_class", "1"), { recursive: true });
  writeFileSync(path.join(repository, "no_class", "1", "model.js"), "exports.execute = () => [];\n");
});

afterAll(async () => {
  await Promise.all(instances.map((instance) => instance.close()));
  rmSync(repository, { recursive: true, force: true });
});

describe("TypeScript backend: tensors and requests", () => {
  it("hands every Triton datatype to the model as its typed array and takes it back unchanged", async () => {
    const instance = await start("probe");
    const cases: [string, string, Uint8Array][] = [
      ["BOOL", "Uint8Array", Uint8Array.from([1, 0, 1])],
      ["UINT8", "Uint8Array", Uint8Array.from([0, 128, 255])],
      ["UINT16", "Uint16Array", bytes(Uint16Array.from([0, 1, 65535]))],
      ["UINT32", "Uint32Array", bytes(Uint32Array.from([0, 1, 2 ** 32 - 1]))],
      ["UINT64", "BigUint64Array", bytes(BigUint64Array.from([0n, 1n, 2n ** 64n - 1n]))],
      ["INT8", "Int8Array", bytes(Int8Array.from([-128, 0, 127]))],
      ["INT16", "Int16Array", bytes(Int16Array.from([-32768, 0, 32767]))],
      ["INT32", "Int32Array", bytes(Int32Array.from([-(2 ** 31), 0, 2 ** 31 - 1]))],
      ["INT64", "BigInt64Array", bytes(BigInt64Array.from([-(2n ** 63n), 0n, 2n ** 63n - 1n]))],
      ["FP16", "Uint16Array", bytes(Uint16Array.from([0x3c00, 0xc000, 0x7c00]))],
      ["BF16", "Uint16Array", bytes(Uint16Array.from([0x3f80, 0xc000, 0x7f80]))],
      ["FP32", "Float32Array", bytes(Float32Array.from([-1.5, 0, 3e38]))],
      ["FP64", "Float64Array", bytes(Float64Array.from([-1.5, Math.PI, 1e300]))],
      ["BYTES", "Array", joinBytesElements([utf8(""), utf8("héllo"), Uint8Array.from([0, 255])])],
    ];
    const result = await executeRequests(instance, cases.map(([datatype, , data]) => request({ INPUT0: { datatype, shape: [1, 3], data: data.slice() } })));
    cases.forEach(([datatype, arrayClass, data], i) => {
      const output = outputsOf(result.responses[i]).get("OUTPUT0")!;
      expect(output, datatype).toEqual({ datatype, shape: [1, 3], data });
      expect(infoOf(result.responses[i])["types"], datatype).toEqual({ INPUT0: arrayClass });
    });
  });

  it("gives the model its initialize() args and each request's parameters and requested outputs", async () => {
    const instance = await start("probe");
    const result = await executeRequests(instance, [
      request({ INPUT0: fp32([1]) }, { k: 3, label: "x", exact: true, big: 2n ** 60n }),
      request({ INPUT0: fp32([2]) }),
    ]);
    const first = infoOf(result.responses[0]);
    expect(first["parameters"]).toEqual({ k: 3, label: "x", exact: true, big: `${2n ** 60n}n` });
    expect(first["requestedOutputs"]).toEqual(["OUTPUT0", "INFO"]);
    expect(first["fp16OfOne"]).toBe(0x3c00);
    expect(first["args"]).toEqual({
      modelConfig: { name: "probe", max_batch_size: 8 }, modelName: "probe", modelVersion: 1,
      modelDirectory: path.join(repository, "probe"), versionDirectory: path.join(repository, "probe", "1"),
      instanceName: "probe_0", instanceKind: "KIND_CPU", deviceId: 0,
    });
    expect(infoOf(result.responses[1])["parameters"]).toEqual({});
  });

  it("fails only the request the model refuses, with the model's code, or INTERNAL without one", async () => {
    const instance = await start("probe");
    const result = await executeRequests(instance, [
      request({ INPUT0: fp32([1]) }, { behave: "invalid" }),
      request({ INPUT0: fp32([2]) }),
      request({ INPUT0: fp32([3]) }, { behave: "internal" }),
      request({ INPUT0: fp32([4]) }, { behave: "bad-output" }),
      request({ INPUT0: fp32([5]) }, { behave: "bad-code" }),
    ]);
    expect(result.responses[0]).toEqual({ error: { code: "INVALID_ARG", message: "the model refuses this request" } });
    expect(outputsOf(result.responses[1]).get("OUTPUT0")).toEqual(fp32([2]));
    expect(result.responses[2]).toEqual({ error: { code: "INTERNAL", message: "the model failed on this request" } });
    expect(result.responses[3]).toEqual({ error: { code: "INTERNAL", message: "TypeScript model execute() returned an invalid response: output 'OUTPUT0' is FP32, so its data must be a Float32Array" } });
    expect(result.responses[4]).toMatchObject({ error: { code: "INTERNAL", message: expect.stringContaining('error code "NOPE" is not one of INVALID_ARG') } });
  });

  it("fails the whole batch when execute() throws, and keeps serving", async () => {
    const instance = await start("probe");
    await expect(executeRequests(instance, [request({ INPUT0: fp32([1]) }), request({ INPUT0: fp32([2]) }, { behave: "throw" })]))
      .rejects.toThrow("TypeScript model execute() failed: execute exploded");
    const again = await executeRequests(instance, [request({ INPUT0: fp32([7]) })]);
    expect(outputsOf(again.responses[0]).get("OUTPUT0")).toEqual(fp32([7]));
  });

  it("refuses to load a model whose initialize() throws, with its message", async () => {
    await expect(backend.createInstance(spec("broken_init", { init_fail: "no camera attached" })))
      .rejects.toThrow("TypeScript model initialize() failed: no camera attached");
  });

  it("names a missing model.js and a model.js without a model class", async () => {
    await expect(backend.createInstance(spec("absent"))).rejects.toThrow(/model file .*absent\/1\/model.js not found/);
    await expect(backend.createInstance(spec("no_class"))).rejects.toThrow(/cannot load TypeScript model: .*model.js must export its model class as the default export/);
  });

  it("runs finalize() when the instance closes", async () => {
    const instance = await backend.createInstance(spec("probe"));
    await instance.close();
    expect(readFileSync(path.join(repository, "probe", "1", "finalized"), "utf8")).toBe("yes");
  });

  it("reports a worker that exits in execute(): the execution fails with the reason and `lost` resolves", async () => {
    const instance = await start("probe");
    await expect(executeRequests(instance, [request({ INPUT0: fp32([1]) }, { behave: "exit" })]))
      .rejects.toThrow("the instance's worker thread exited with code 3");
    expect((await instance.lost!).message).toBe("the instance's worker thread exited with code 3");
    await expect(executeRequests(instance, [request({ INPUT0: fp32([1]) })])).rejects.toThrow("exited with code 3");
  });

  it("reports a worker that runs out of its max_heap_size_mb", async () => {
    const instance = await start("probe", { max_heap_size_mb: "16" });
    await expect(executeRequests(instance, [request({ INPUT0: fp32([1]) }, { behave: "grow" })])).rejects.toThrow(/worker thread crashed: .*memory limit/);
    expect((await instance.lost!).message).toMatch(/memory limit/);
  });

  it("refuses a max_heap_size_mb that is not a positive integer", async () => {
    await expect(backend.createInstance(spec("probe", { max_heap_size_mb: "lots" }))).rejects.toThrow("model parameter max_heap_size_mb must be a positive integer, got 'lots'");
  });

  it("caps a worker's heap at 1024 MiB when the model sets no max_heap_size_mb", async () => {
    const limits = async (instance: BackendInstance): Promise<unknown> => {
      const { responses } = await executeRequests(instance, [request({ INPUT0: fp32([1]) }, { behave: "limits" })]);
      return JSON.parse((responses[0] as { error: { message: string } }).error.message);
    };
    expect(await limits(await start("probe"))).toMatchObject({ maxOldGenerationSizeMb: 1024 });
    expect(await limits(await start("probe", { max_heap_size_mb: "64" }))).toMatchObject({ maxOldGenerationSizeMb: 64 });
  });

  it("refuses process.kill() in a model, which would signal the whole server", async () => {
    const instance = await start("probe");
    await expect(executeRequests(instance, [request({ INPUT0: fp32([1]) }, { behave: "kill" })]))
      .rejects.toThrow("TypeScript model execute() failed: process.kill() is not allowed in a TypeScript model");
    const again = await executeRequests(instance, [request({ INPUT0: fp32([7]) })]);
    expect(outputsOf(again.responses[0]).get("OUTPUT0")).toEqual(fp32([7]));
  });
});

describe("TypeScript backend: an execute() that never returns", () => {
  it.each(["spin", "hang", "wait"])("ends a '%s' execute() past execution_timeout_ms with UNAVAILABLE, and the instance is lost", async (behave) => {
    const instance = await start("probe", { execution_timeout_ms: "300" });
    const result = await executeRequests(instance, [request({ INPUT0: fp32([1]) }, { behave }), request({ INPUT0: fp32([2]) })]);
    const error = { code: "UNAVAILABLE", message: "TypeScript model execute() did not finish within 300 ms (execution_timeout_ms): its instance is restarted" };
    expect(result.responses).toEqual([{ error }, { error }]);
    expect((await instance.lost!).message).toBe(error.message);
  });

  it("serves executions shorter than execution_timeout_ms as usual", async () => {
    const instance = await start("probe", { execution_timeout_ms: "60000" });
    const result = await executeRequests(instance, [request({ INPUT0: fp32([3]) })]);
    expect(outputsOf(result.responses[0]).get("OUTPUT0")).toEqual(fp32([3]));
  });

  it("ends an execution still running unload_timeout_ms after the model began to unload, and close() then returns", async () => {
    const instance = await start("probe", { unload_timeout_ms: "300" });
    const running = executeRequests(instance, [request({ INPUT0: fp32([1]) }, { behave: "spin" })]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    instance.draining!();
    expect((await running).responses).toEqual([{ error: {
      code: "UNAVAILABLE", message: "TypeScript model execute() was still running 300 ms after the model began to unload (unload_timeout_ms): its worker thread was terminated",
    } }]);
    await instance.close();
  });

  it("close() during a spinning execute() ends the worker after unload_timeout_ms, failing the execution with why", async () => {
    const instance = await backend.createInstance(spec("probe", { unload_timeout_ms: "300" }));
    const running = executeRequests(instance, [request({ INPUT0: fp32([1]) }, { behave: "spin" })]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Expected before close(), which rejects it: a rejection nobody handles yet would count as unhandled.
    const failed = expect(running).rejects.toThrow("the instance was closed (model unloaded or server shutting down) before its execution finished");
    await instance.close();
    await failed;
  });

  it("refuses execution_timeout_ms and unload_timeout_ms that are not positive integers", async () => {
    await expect(backend.createInstance(spec("probe", { execution_timeout_ms: "0" }))).rejects.toThrow("model parameter execution_timeout_ms must be a positive integer, got '0'");
    await expect(backend.createInstance(spec("probe", { unload_timeout_ms: "1.5" }))).rejects.toThrow("model parameter unload_timeout_ms must be a positive integer, got '1.5'");
  });
});

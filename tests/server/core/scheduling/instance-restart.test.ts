import { mkdtempSync, renameSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import type { Backend } from "../../../../server/backends/backend";
import { startWorkerThread, type WorkerFactory } from "../../../../server/backends/instance-worker";
import { OnnxruntimeBackend } from "../../../../server/backends/onnxruntime/onnxruntime-backend";
import { TypeScriptBackend } from "../../../../server/backends/typescript/typescript-backend";
import { InferenceCore, type InferResponse, InferenceError } from "../../../../server/core/index";
import { squeezenetRepository } from "../../../helpers/squeezenet";
import { writeProbeModel } from "../../../helpers/typescript-test-models";
import { inferOn } from "../../../helpers/core-infer";

/**
 * Self-healing instances, in-process with the real backends: a worker thread that dies fails the execution it
 * held, the instance is restarted with backoff (logged and counted), and later requests are served.
 */
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Started {
  readonly core: InferenceCore;
  readonly logs: string[];
}

async function startCore(repository: string, backends: ReadonlyMap<string, Backend>): Promise<Started> {
  const logs: string[] = [];
  const core = new InferenceCore({
    modelRepositories: [repository], serverName: "test", serverVersion: "0", strictReadiness: true, exitOnError: true,
    modelControlMode: "none", repositoryPollMs: 60_000, responseCacheBytes: undefined, startupModels: [],
    log: { info: (line) => logs.push(line), warn: (line) => logs.push(line) },
    loader: {
      autoCompleteConfig: true, backends, gpuCount: 0, cpuCount: 2, defaultMaxBatchSize: 4, intraOpThreads: 1,
      instanceRestart: { initialBackoffMs: 10, maxBackoffMs: 1000 },
    },
  });
  await core.start();
  cleanups.push(() => core.close());
  return { core, logs };
}

function probeRepository(parameters?: Readonly<Record<string, string>>): string {
  const repository = mkdtempSync(path.join(os.tmpdir(), "instance-restart-"));
  cleanups.push(() => rmSync(repository, { recursive: true, force: true }));
  writeProbeModel(repository, { name: "probe", parameters });
  return repository;
}

const one = (value: number) => ({ name: "INPUT0", datatype: "FP32" as const, shape: [1, 1], data: new Uint8Array(Float32Array.of(value).buffer) });

function probe(core: InferenceCore, value: number, behave?: string): Promise<InferResponse> {
  return inferOn(core, { modelName: "probe", inputs: [one(value)], outputs: [{ name: "OUTPUT0" }], parameters: behave === undefined ? {} : { behave } });
}

function valueOf(response: InferResponse): number {
  return new Float32Array(response.outputs[0]!.data.slice().buffer)[0]!;
}

async function until(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const gauges = (core: InferenceCore, model: string) => core.modelGauges().find((g) => g.modelName === model)!;

describe("a TypeScript model instance whose worker dies", () => {
  it("fails the request it held with INTERNAL, restarts, and serves the requests that queued meanwhile", async () => {
    const { core, logs } = await startCore(probeRepository(), new Map([["typescript", new TypeScriptBackend()]]));
    const failure = await probe(core, 1, "exit").catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(InferenceError);
    expect(failure).toMatchObject({ code: "INTERNAL", message: "the instance's worker thread exited with code 3" });
    // Sent while the only instance is down: they wait in the queue for the replacement.
    const later = await Promise.all([2, 3, 4].map((value) => probe(core, value)));
    expect(later.map(valueOf)).toEqual([2, 3, 4]);
    expect(gauges(core, "probe")).toMatchObject({ instanceRestarts: 1, instanceCount: 1 });
    expect(logs).toContain("instance probe_0_0 of model 'probe' version 1 died (the instance's worker thread exited with code 3); restarting it in 10 ms");
    expect(logs).toContain("restarted instance probe_0_0 of model 'probe' version 1");
    expect(core.statistics("probe")[0]!.inference_stats.fail.count).toBe(1);
  });

  it("backs off further while an instance keeps dying soon after it starts, and from the start once it lived a while", async () => {
    const { core, logs } = await startCore(probeRepository(), new Map([["typescript", new TypeScriptBackend()]]));
    const delays = (): string[] => logs.flatMap((line) => /restarting it in (\d+) ms/.exec(line)?.[1] ?? []);
    const dieAndComeBack = async (): Promise<void> => {
      const restarted = logs.filter((line) => line.startsWith("restarted")).length;
      await expect(probe(core, 1, "exit")).rejects.toMatchObject({ code: "INTERNAL" });
      await until(() => logs.filter((line) => line.startsWith("restarted")).length > restarted, "the restart");
    };
    await dieAndComeBack();
    await dieAndComeBack();
    expect(delays()).toEqual(["10", "20"]);
    await new Promise((resolve) => setTimeout(resolve, 1100)); // longer than the 1 s max backoff
    await dieAndComeBack();
    expect(delays()).toEqual(["10", "20", "10"]);
    expect(gauges(core, "probe").instanceRestarts).toBe(3);
  });

  it("is replaced when the model throws outside execute() (a timer), after answering", async () => {
    const { core, logs } = await startCore(probeRepository(), new Map([["typescript", new TypeScriptBackend()]]));
    expect(valueOf(await probe(core, 5, "throw-later"))).toBe(5);
    await until(() => logs.some((line) => line.startsWith("restarted")), "the restart");
    expect(logs.find((line) => line.startsWith("instance "))).toBe("instance probe_0_0 of model 'probe' version 1 died (the instance's worker thread crashed: thrown from a timer); restarting it in 10 ms");
    expect(valueOf(await probe(core, 6))).toBe(6);
    expect(gauges(core, "probe").instanceRestarts).toBe(1);
  });

  it("keeps restarting with doubling backoff while starting fails, failing what queued, until it can start again", async () => {
    const repository = probeRepository();
    const { core, logs } = await startCore(repository, new Map([["typescript", new TypeScriptBackend()]]));
    const modelFile = path.join(repository, "probe", "1", "model.js");
    renameSync(modelFile, `${modelFile}.away`);
    await expect(probe(core, 1, "exit")).rejects.toMatchObject({ code: "INTERNAL" });
    await until(() => logs.filter((line) => line.includes("trying again")).length >= 2, "two failed restarts");
    expect(logs.filter((line) => line.includes("trying again")).slice(0, 2).map((line) => /trying again in (\d+) ms/.exec(line)?.[1]))
      .toEqual(["20", "40"]);
    expect(logs.find((line) => line.includes("trying again"))).toMatch(/^restarting instance probe_0_0 of model 'probe' version 1 failed \(model file .*model\.js not found/);
    // With no instance alive and restarts failing, a request is answered rather than left waiting.
    await expect(probe(core, 2)).rejects.toMatchObject({ code: "UNAVAILABLE", message: expect.stringMatching(/^every instance of the model is down and restarting failed: model file/) });
    renameSync(`${modelFile}.away`, modelFile);
    await until(() => gauges(core, "probe").instanceCount === 1, "the instance to come back");
    expect(valueOf(await probe(core, 3))).toBe(3);
  });
});

describe("a TypeScript model instance whose execute() never returns", () => {
  it("fails the request with UNAVAILABLE past execution_timeout_ms, restarts the instance and serves the next", async () => {
    const { core, logs } = await startCore(probeRepository({ execution_timeout_ms: "500" }), new Map([["typescript", new TypeScriptBackend()]]));
    const message = "TypeScript model execute() did not finish within 500 ms (execution_timeout_ms): its instance is restarted";
    await expect(probe(core, 1, "spin")).rejects.toMatchObject({ code: "UNAVAILABLE", message });
    expect(valueOf(await probe(core, 2))).toBe(2);
    expect(gauges(core, "probe")).toMatchObject({ instanceRestarts: 1, instanceCount: 1 });
    expect(logs).toContain(`instance probe_0_0 of model 'probe' version 1 died (${message}); restarting it in 10 ms`);
  });

  it("lets the core close: the stuck execution ends unload_timeout_ms after, and what queued behind it, with UNAVAILABLE", async () => {
    const { core, logs } = await startCore(probeRepository({ unload_timeout_ms: "300" }), new Map([["typescript", new TypeScriptBackend()]]));
    const stuck = probe(core, 1, "hang").catch((error: unknown) => error);
    await until(() => gauges(core, "probe").instanceBusySeconds > 0, "the execution to start");
    const queued = probe(core, 2).catch((error: unknown) => error);
    await core.close();
    const message = "TypeScript model execute() was still running 300 ms after the model began to unload (unload_timeout_ms): its worker thread was terminated";
    expect(await stuck).toMatchObject({ code: "UNAVAILABLE", message });
    expect(await queued).toMatchObject({ code: "UNAVAILABLE", message: `the model is unloading and its last instance ended: ${message}` });
    expect(logs.filter((line) => line.includes("restart"))).toEqual([]);
  });
});

describe("an ONNX Runtime instance whose worker is terminated", () => {
  it("fails the execution it held, is restarted, and later requests succeed", async () => {
    const workers: Worker[] = [];
    let killNext = false;
    // The backend starts its workers through this factory: the test keeps each real Worker, and terminates the
    // first one when an execution is handed to it (the only honest handle on a thread inside the process). The
    // execution never reaches the thread: terminating one inside ONNX Runtime's native run can abort the whole
    // process (an N-API error thrown while the thread is torn down), which is why the server itself never does.
    const startWorker: WorkerFactory = (file, options) => {
      const worker = startWorkerThread(file, options);
      workers.push(worker);
      const post = worker.postMessage.bind(worker);
      worker.postMessage = (message: unknown, transfer?: readonly ArrayBuffer[]) => {
        if (!killNext) return post(message, transfer);
        killNext = false;
        void worker.terminate();
      };
      return worker;
    };
    const repository = squeezenetRepository();
    cleanups.push(() => rmSync(repository, { recursive: true, force: true }));
    const { core, logs } = await startCore(repository, new Map([["onnxruntime", new OnnxruntimeBackend({ startWorker })]]));
    const image = () => ({ name: "data_0", datatype: "FP16" as const, shape: [1, 3, 224, 224], data: new Uint8Array(3 * 224 * 224 * 2) });
    const classify = () => inferOn(core, { modelName: "squeezenet", inputs: [image()] });
    expect(workers).toHaveLength(1);
    killNext = true;
    await expect(classify()).rejects.toMatchObject({ code: "INTERNAL", message: "the instance's worker thread exited with code 1" });
    const after = await classify();
    expect(after.outputs[0]).toMatchObject({ name: "softmaxout_1", datatype: "FP16", shape: [1, 1000, 1, 1] });
    expect(workers).toHaveLength(2);
    expect(gauges(core, "squeezenet")).toMatchObject({ instanceRestarts: 1, instanceCount: 1 });
    expect(logs.find((line) => line.startsWith("instance "))).toMatch(/^instance squeezenet_0_0 of model 'squeezenet' version 1 died \(the instance's worker thread exited with code 1\); restarting it in 10 ms$/);
  });
});

import path from "node:path";
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import type { WorkerFactory } from "../../../server/backends/instance-worker";
import { openOnDeviceThread, runningDeviceThreads } from "../../../server/backends/onnxruntime/ort-device-thread";
import type { OrtSessionSettings, OrtWorkerReply, WorkerRequest } from "../../../server/backends/onnxruntime/ort-worker-protocol";
import { EXAMPLE_REPOSITORY } from "../../helpers/server-process";

/**
 * The thread that hosts every WebGPU session of a device, exercised with CPU sessions (its bookkeeping does not
 * depend on the provider; tests/e2e/software-gpu.test.ts runs it with WebGPU): several sessions on one thread,
 * one call at a time each, the thread ends with its last session, and its death loses every session on it.
 */
const settings: OrtSessionSettings = {
  modelPath: path.join(EXAMPLE_REPOSITORY, "simple", "1", "model.onnx"), executionProviders: ["cpu"], intraOpNumThreads: 1, interOpNumThreads: 1,
  executionMode: "sequential", graphOptimizationLevel: "all", enableCpuMemArena: true, enableMemPattern: true, allowSpinning: false,
};

const int32 = (values: number[]): Uint8Array => new Uint8Array(Int32Array.from(values).buffer);
const request = (a: number): Omit<WorkerRequest, "id"> => ({
  inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], parts: [int32(Array(16).fill(a))] })),
  outputNames: ["OUTPUT0"],
});
const sum = (reply: OrtWorkerReply): number[] => {
  if (reply.type !== "result") throw new Error(reply.message);
  return [...new Int32Array(reply.outputs[0]!.data.slice().buffer)];
};

describe("the per-device ONNX Runtime thread", () => {
  it("hosts several sessions on one thread, runs each one call at a time, and ends after the last is closed", async () => {
    let started = 0;
    const startWorker: WorkerFactory = (file, options) => {
      started++;
      return new Worker(file, options);
    };
    const [a, b] = await Promise.all([openOnDeviceThread("test:0", settings, startWorker), openOnDeviceThread("test:0", settings, startWorker)]);
    expect(started).toBe(1);
    expect(runningDeviceThreads()).toBe(1);
    expect(a.io.inputs.map((t) => t.name)).toEqual(["INPUT0", "INPUT1"]);
    const first = a.session.call(request(1), []);
    await expect(a.session.call(request(1), [])).rejects.toThrow(/instance is busy/);
    const [ra, rb] = await Promise.all([first, b.session.call(request(5), [])]);
    expect(sum(ra)).toEqual(Array(16).fill(2));
    expect(sum(rb)).toEqual(Array(16).fill(10));
    await a.session.close();
    expect(runningDeviceThreads()).toBe(1);
    await expect(a.session.call(request(1), [])).rejects.toThrow(/closed/);
    await b.session.close();
    expect(runningDeviceThreads()).toBe(0);
    // A later load starts a new thread.
    const c = await openOnDeviceThread("test:0", settings, startWorker);
    expect(started).toBe(2);
    await c.session.close();
  });

  it("loses every session on the thread when it dies, so the core replaces each", async () => {
    let worker: Worker | undefined;
    const startWorker: WorkerFactory = (file, options) => (worker = new Worker(file, options));
    const sessions = await Promise.all([openOnDeviceThread("test:1", settings, startWorker), openOnDeviceThread("test:1", settings, startWorker)]);
    await worker!.terminate();
    const reasons = await Promise.all(sessions.map((s) => s.session.lost));
    for (const reason of reasons) expect(reason.message).toMatch(/device's worker thread exited/);
    expect(runningDeviceThreads()).toBe(0);
  });

  it("rejects a session ONNX Runtime cannot load, with its message, and leaves no thread behind", async () => {
    await expect(openOnDeviceThread("test:2", { ...settings, modelPath: "/nonexistent/model.onnx" }, (file, options) => new Worker(file, options)))
      .rejects.toThrow(/nonexistent/);
    expect(runningDeviceThreads()).toBe(0);
  });
});

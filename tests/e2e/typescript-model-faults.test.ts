import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../helpers/server-process";
import { writeProbeModel } from "../helpers/typescript-test-models";
import { parseExposition } from "../server/metrics/prometheus-text";
import { type BinaryTransports, binaryTransports, type Protocol } from "./binary-transports";
import type { CaseResult } from "./protocol-transport";

/**
 * What a client sees when a TypeScript model fails, through the real server: a model whose initialize() throws,
 * one that refuses a request, one whose execute() throws, and one whose worker thread dies.
 */
describe("TypeScript model failures, over REST and gRPC", () => {
  let repository: string;
  let server: RunningServer;
  let clients: BinaryTransports;

  beforeAll(async () => {
    repository = mkdtempSync(path.join(os.tmpdir(), "typescript-faults-"));
    writeProbeModel(repository, { name: "probe" });
    writeProbeModel(repository, { name: "needs_camera", parameters: { init_fail: "no camera attached" } });
    server = await startServer({
      repository, services: ["http", "grpc", "metrics"], args: ["--exit-on-error", "false", "--instance-restart-backoff-ms", "10"],
    });
    clients = binaryTransports(server);
  });
  afterAll(async () => {
    clients?.close();
    await server?.stop();
    rmSync(repository, { recursive: true, force: true });
  });

  function probe(protocol: Protocol, value: number, behave?: string, model = "probe"): Promise<CaseResult> {
    return clients.byProtocol[protocol].infer({
      model, inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, 1], values: [value] }], outputs: [{ name: "OUTPUT0" }],
      ...(behave !== undefined ? { parameters: { behave } } : {}),
    });
  }

  async function restarts(): Promise<number | undefined> {
    const metrics = parseExposition(await fetch(`${server.metricsUrl}/metrics`).then((r) => r.text()));
    return metrics.value("inference_instance_restarts_total", { model: "probe", version: "1" });
  }

  it("leaves a model whose initialize() throws UNAVAILABLE, with the message as the reason", async () => {
    const index = await fetch(`${server.httpUrl}/v2/repository/index`, { method: "POST", body: "{}" }).then((r) => r.json());
    expect(index).toContainEqual({ name: "needs_camera", version: "1", state: "UNAVAILABLE", reason: "TypeScript model initialize() failed: no camera attached" });
    for (const protocol of ["REST", "gRPC"] as const) {
      expect(await probe(protocol, 1, undefined, "needs_camera")).toEqual({
        kind: "error", code: "UNAVAILABLE",
        message: "Request for unknown model: 'needs_camera' has no available versions (version 1: TypeScript model initialize() failed: no camera attached)",
      });
    }
  });

  describe.each<Protocol>(["REST", "gRPC"])("over %s", (protocol) => {
    it("hands the model only the user's parameters: Triton's reserved keys stay with the server", async () => {
      const result = await clients.byProtocol[protocol].infer({
        model: "probe", inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, 1], values: [1] }], outputs: [{ name: "INFO" }],
        parameters: { user_key: "kept", priority: 0, timeout: 0, sequence_start: false, sequence_end: false, binary_data_output: false },
      });
      expect(result.kind).toBe("ok");
      const info = JSON.parse(String((result as Extract<CaseResult, { kind: "ok" }>).outputs[0]!.values[0])) as { parameters: unknown };
      expect(info.parameters).toEqual({ user_key: "kept" });
    });

    it("fails a request the model refuses with the model's code and message", async () => {
      expect(await probe(protocol, 1, "invalid")).toEqual({ kind: "error", code: "INVALID_ARG", message: "the model refuses this request" });
      expect(await probe(protocol, 1, "internal")).toEqual({ kind: "error", code: "INTERNAL", message: "the model failed on this request" });
    });

    it("fails with INTERNAL when execute() throws, and the same instance keeps serving", async () => {
      const before = await restarts();
      expect(await probe(protocol, 1, "throw")).toEqual({ kind: "error", code: "INTERNAL", message: "TypeScript model execute() failed: execute exploded" });
      expect(await probe(protocol, 2)).toMatchObject({ kind: "ok", outputs: [{ name: "OUTPUT0", values: [2] }] });
      expect(await restarts()).toBe(before);
    });

    it("fails the request whose execution killed the worker, restarts the instance (counted and logged) and serves the next", async () => {
      const before = (await restarts())!;
      expect(await probe(protocol, 1, "exit")).toEqual({ kind: "error", code: "INTERNAL", message: "the instance's worker thread exited with code 3" });
      expect(await probe(protocol, 4)).toMatchObject({ kind: "ok", outputs: [{ name: "OUTPUT0", values: [4] }] });
      expect(await restarts()).toBe(before + 1);
      expect(server.logs()).toContain("instance probe_0_0 of model 'probe' version 1 died (the instance's worker thread exited with code 3); restarting it in 10 ms");
      expect(server.logs()).toContain("restarted instance probe_0_0 of model 'probe' version 1");
    });
  });
});

describe("a TypeScript model whose execute() never returns, through the real server", () => {
  let repository: string;
  let server: RunningServer;

  beforeAll(async () => {
    repository = mkdtempSync(path.join(os.tmpdir(), "typescript-stuck-"));
    writeProbeModel(repository, { name: "probe", parameters: { unload_timeout_ms: "1000" } });
    writeProbeModel(repository, { name: "bounded", parameters: { execution_timeout_ms: "500" } });
    server = await startServer({
      repository, args: ["--model-control-mode", "explicit", "--load-model", "probe", "--load-model", "bounded", "--instance-restart-backoff-ms", "10"],
    });
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(repository, { recursive: true, force: true });
  });

  const infer = (model: string, behave?: string): Promise<{ status: number; body: unknown }> =>
    fetch(`${server.httpUrl}/v2/models/${model}/infer`, {
      method: "POST",
      body: JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, 1], data: [1] }], outputs: [{ name: "OUTPUT0" }], ...(behave !== undefined ? { parameters: { behave } } : {}) }),
    }).then(async (response) => ({ status: response.status, body: await response.json() }));
  const repositoryCall = (model: string, action: "load" | "unload"): Promise<number> =>
    fetch(`${server.httpUrl}/v2/repository/models/${model}/${action}`, { method: "POST" }).then((response) => response.status);

  it("answers 503 past execution_timeout_ms and serves the next request from a restarted instance", async () => {
    expect(await infer("bounded", "hang")).toEqual({
      status: 503, body: { error: "TypeScript model execute() did not finish within 500 ms (execution_timeout_ms): its instance is restarted" },
    });
    expect(await infer("bounded")).toMatchObject({ status: 200, body: { outputs: [{ name: "OUTPUT0", data: [1] }] } });
  });

  it("unloads and reloads a model whose execute() spins, failing the stuck request with 503 after unload_timeout_ms", async () => {
    const stuck = infer("probe", "spin");
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await repositoryCall("probe", "unload")).toBe(200);
    expect(await stuck).toEqual({
      status: 503, body: { error: "TypeScript model execute() was still running 1000 ms after the model began to unload (unload_timeout_ms): its worker thread was terminated" },
    });
    expect(await repositoryCall("probe", "load")).toBe(200);
    const stuckAgain = infer("probe", "wait");
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await repositoryCall("probe", "load")).toBe(200);
    expect((await stuckAgain).status).toBe(503);
    expect(await infer("probe")).toMatchObject({ status: 200 });
  });

  it("refuses process.kill() in a model: the request fails and the server keeps serving", async () => {
    expect(await infer("probe", "kill")).toEqual({
      status: 500, body: { error: "TypeScript model execute() failed: process.kill() is not allowed in a TypeScript model" },
    });
    expect(await infer("probe")).toMatchObject({ status: 200 });
    expect(server.process.exitCode).toBeNull();
  });
});

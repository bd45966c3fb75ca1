import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeCallerModel } from "../helpers/bls-test-models";
import { type RunningServer, startServer } from "../helpers/server-process";
import { writeProbeModel } from "../helpers/typescript-test-models";
import { parseExposition } from "../server/metrics/prometheus-text";
import { status } from "@grpc/grpc-js";
import { type BinaryTransports, binaryTransports, type Protocol } from "./binary-transports";
import { GrpcTestClient } from "./grpc-transport";
import type { CaseResult } from "./protocol-transport";

/** A callee whose queue holds a lone request for a minute: a call to it stays pending until it is cancelled. */
const HOLDING_QUEUE_DELAY_US = 60_000_000;

interface ModelStats {
  readonly inference_count: number;
  readonly execution_count: number;
  readonly inference_stats: { readonly success: { readonly count: number }; readonly fail: { readonly count: number } };
  readonly batch_stats: readonly { readonly batch_size: number; readonly compute_infer: { readonly count: number } }[];
}

/**
 * Models calling models (BLS) through the real server: results, the callee's statistics and dynamic batching,
 * error codes, cancellation of pending calls when the request that made them goes away, depth and cycle refusals.
 */
describe("TypeScript models calling other models (BLS)", () => {
  let repository: string;
  let server: RunningServer;
  let clients: BinaryTransports;

  beforeAll(async () => {
    repository = mkdtempSync(path.join(os.tmpdir(), "bls-"));
    writeProbeModel(repository, { name: "probe" });
    writeProbeModel(repository, { name: "gather", maxBatchSize: 4, maxQueueDelayUs: HOLDING_QUEUE_DELAY_US });
    writeProbeModel(repository, { name: "holding", maxQueueDelayUs: HOLDING_QUEUE_DELAY_US });
    writeCallerModel(repository, { name: "caller" });
    writeCallerModel(repository, { name: "fan_in", count: 4 });
    writeCallerModel(repository, { name: "recursive", count: 3 });
    writeCallerModel(repository, { name: "ping" });
    writeCallerModel(repository, { name: "pong" });
    writeCallerModel(repository, { name: "impatient", parameters: { execution_timeout_ms: "200" } });
    writeCallerModel(repository, { name: "mortal" });
    writeCallerModel(repository, { name: "twin", count: 2, dynamicBatching: false });
    server = await startServer({
      repository, services: ["http", "grpc", "metrics"], args: ["--model-call-max-depth", "2", "--instance-restart-backoff-ms", "10"],
    });
    clients = binaryTransports(server);
  });
  afterAll(async () => {
    clients?.close();
    await server?.stop();
    rmSync(repository, { recursive: true, force: true });
  });

  function infer(model: string, values: readonly number[], parameters: Record<string, string> = {}, protocol: Protocol = "REST"): Promise<CaseResult> {
    return clients.byProtocol[protocol].infer({
      model, inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, values.length], values }], outputs: [{ name: "OUTPUT0" }], parameters,
    });
  }

  async function stats(model: string): Promise<ModelStats> {
    const body = await fetch(`${server.httpUrl}/v2/models/${model}/stats`).then((r) => r.json()) as { model_stats: ModelStats[] };
    return body.model_stats[0]!;
  }

  async function pending(model: string): Promise<number | undefined> {
    const metrics = parseExposition(await fetch(`${server.metricsUrl}/metrics`).then((r) => r.text()));
    return metrics.value("nv_inference_pending_request_count", { model, version: "1" });
  }

  /** Polls until `check` holds; the deadline is a hang guard, not the verdict. */
  async function until(what: string, check: () => Promise<boolean>): Promise<void> {
    for (const deadline = Date.now() + 30_000; !(await check());) {
      if (Date.now() > deadline) throw new Error(`gave up waiting until ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  describe.each<Protocol>(["REST", "gRPC"])("over %s", (protocol) => {
    it("answers with what a direct request to the callee answers", async () => {
      const direct = await infer("probe", [1.5, -2, 3], {}, protocol);
      expect(direct.kind).toBe("ok");
      expect(await infer("caller", [1.5, -2, 3], { route: "probe" }, protocol)).toEqual(direct);
      expect(await infer("caller", [4], { route: "fan_in,probe" }, protocol)).toEqual(await infer("probe", [4], {}, protocol));
    });

    it("fails with the callee's error code and message", async () => {
      expect(await infer("caller", [1], { route: "probe", call_behave: "invalid" }, protocol)).toEqual({
        kind: "error", code: "INVALID_ARG", message: "probe: the model refuses this request",
      });
      expect(await infer("caller", [1], { route: "nowhere" }, protocol)).toEqual({ kind: "error", code: "NOT_FOUND", message: "nowhere: Request for unknown model: 'nowhere' is not found" });
    });
  });

  it("counts the calls in the callee's statistics", async () => {
    const before = await stats("probe");
    for (let i = 0; i < 3; i++) expect((await infer("caller", [i], { route: "probe" })).kind).toBe("ok");
    const after = await stats("probe");
    expect(after.inference_stats.success.count - before.inference_stats.success.count).toBe(3);
    expect(after.inference_count - before.inference_count).toBe(3);
  });

  it("batches calls made while serving concurrent requests in the callee's dynamic batcher", async () => {
    // gather runs a batch only once it is full (4) or after a minute: four calls answered means one batch of four.
    const results = await Promise.all([1, 2, 3, 4].map((value) => infer("fan_in", [value], { route: "gather" })));
    expect(results.map((result) => result.kind === "ok" ? result.outputs[0]!.values : result)).toEqual([[1], [2], [3], [4]]);
    const gather = await stats("gather");
    expect(gather.execution_count).toBe(1);
    expect(gather.inference_count).toBe(4);
    expect(gather.batch_stats).toEqual([expect.objectContaining({ batch_size: 4, compute_infer: expect.objectContaining({ count: 1 }) })]);
  });

  it("fails a call whose callee's worker dies with INTERNAL, and both models keep serving", async () => {
    const result = await infer("caller", [1], { route: "probe", call_behave: "exit" });
    expect(result).toMatchObject({ kind: "error", code: "INTERNAL" });
    expect((result as { message: string }).message).toMatch(/^probe: .*exited with code 3/);
    await until("probe serves again", async () => (await infer("caller", [5], { route: "probe" })).kind === "ok");
  });

  describe("cancels the calls still pending", () => {
    async function expectHoldingCancelled(failedBefore: number): Promise<void> {
      await until("the pending call failed", async () => (await stats("holding")).inference_stats.fail.count === failedBefore + 1);
      expect(await pending("holding")).toBe(0);
      expect((await stats("holding")).inference_stats.success.count).toBe(0);
    }

    it("when the client of the request that made them goes away", async () => {
      const failedBefore = (await stats("holding")).inference_stats.fail.count;
      const abort = new AbortController();
      const outer = fetch(`${server.httpUrl}/v2/models/caller/infer`, {
        method: "POST", signal: abort.signal,
        body: JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, 1], data: [1] }], parameters: { route: "holding" } }),
      });
      outer.catch(() => undefined);
      await until("the call is queued", async () => (await pending("holding")) === 1);
      abort.abort();
      await expectHoldingCancelled(failedBefore);
    });

    it("when the gRPC call of the request that made them is cancelled", async () => {
      const failedBefore = (await stats("holding")).inference_stats.fail.count;
      const grpc = new GrpcTestClient(server.grpcAddress!);
      try {
        const abort = new AbortController();
        const outer = grpc.unary("ModelInfer", {
          model_name: "caller", inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, 1], contents: { fp32_contents: [1] } }],
          parameters: { route: { string_param: "holding" } },
        }, {}, {}, abort.signal);
        outer.catch(() => undefined);
        await until("the call is queued", async () => (await pending("holding")) === 1);
        abort.abort();
        await expect(outer).rejects.toMatchObject({ code: status.CANCELLED });
        await expectHoldingCancelled(failedBefore);
      } finally {
        grpc.close();
      }
    });

    it("when the request's execution times out", async () => {
      const failedBefore = (await stats("holding")).inference_stats.fail.count;
      const result = await infer("impatient", [1], { route: "holding" });
      expect(result).toMatchObject({ kind: "error", code: "UNAVAILABLE" });
      expect((result as { message: string }).message).toContain("did not finish within 200 ms");
      await expectHoldingCancelled(failedBefore);
    });

    it("when the caller's worker dies while they are pending", async () => {
      const failedBefore = (await stats("holding")).inference_stats.fail.count;
      const result = await infer("mortal", [1], { route: "holding", exit_during_call: "probe" });
      expect(result).toMatchObject({ kind: "error", code: "INTERNAL" });
      expect((result as { message: string }).message).toContain("exited with code 3");
      await expectHoldingCancelled(failedBefore);
      await until("mortal serves again", async () => (await infer("mortal", [2], { route: "probe" })).kind === "ok");
    });
  });

  describe("refuses a call that could deadlock, with UNAVAILABLE", () => {
    it("beyond --model-call-max-depth", async () => {
      expect(await infer("recursive", [7], { route: "recursive,recursive" })).toMatchObject({ kind: "ok", outputs: [{ values: [7] }] });
      expect(await infer("recursive", [7], { route: "recursive,recursive,recursive" })).toEqual({
        kind: "error", code: "UNAVAILABLE",
        message: "recursive: recursive: recursive: model call 'recursive' -> 'recursive' -> 'recursive' -> 'recursive' refused: it would nest 3 model calls, beyond the maximum of 2 (--model-call-max-depth)",
      });
    });

    it("that closes a cycle of waits across requests: two instances of a model calling itself, one request each, never hang", async () => {
      // Whether both requests hold an instance when they call depends on timing: then the second call is refused, else
      // both run; never do both wait for each other until the client gives up.
      for (let round = 0; round < 5; round++) {
        const results = await Promise.all([1, 2].map((value) => infer("twin", [value], { route: "twin" })));
        const refused = results.filter((result) => result.kind === "error");
        expect(refused.length).toBeLessThanOrEqual(1);
        for (const result of refused) {
          expect(result).toEqual({
            kind: "error", code: "UNAVAILABLE",
            message: "twin: model call 'twin' -> 'twin' refused: all 2 instances of 'twin' version 1 are held by executions that wait, in a cycle with this one, on model calls that cannot run",
          });
        }
        expect(results.filter((result) => result.kind === "ok")).toHaveLength(2 - refused.length);
      }
    });

    it("into a model whose every instance waits on the call", async () => {
      expect(await infer("caller", [1], { route: "caller" })).toEqual({
        kind: "error", code: "UNAVAILABLE",
        message: "caller: model call 'caller' -> 'caller' refused: it would wait for an instance of 'caller' version 1, and all 1 of them are held by the executions waiting on this call",
      });
      expect(await infer("ping", [1], { route: "pong,ping" })).toEqual({
        kind: "error", code: "UNAVAILABLE",
        message: "pong: ping: model call 'ping' -> 'pong' -> 'ping' refused: it would wait for an instance of 'ping' version 1, and all 1 of them are held by the executions waiting on this call",
      });
    });
  });
});

describe("a model call in a sampled request's trace", () => {
  it("is traced as a request of its own, with the request that made it as parent_id", async () => {
    const repository = mkdtempSync(path.join(os.tmpdir(), "bls-trace-"));
    const file = path.join(repository, "trace.json");
    let models: { id: number; model_name?: string; parent_id?: number; request_id?: string }[];
    try {
      writeProbeModel(repository, { name: "probe" });
      writeCallerModel(repository, { name: "caller" });
      const server = await startServer({ repository, args: ["--trace-config", `triton,file=${file}`, "--trace-config", "level=TIMESTAMPS", "--trace-config", "rate=1"] });
      try {
        const body = JSON.stringify({ id: "outer", inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, 1], data: [1] }], parameters: { route: "probe" } });
        expect((await fetch(`${server.httpUrl}/v2/models/caller/infer`, { method: "POST", body })).status).toBe(200);
      } finally {
        await server.stop();
      }
      models = (JSON.parse(readFileSync(file, "utf8")) as typeof models).filter((entry) => entry.model_name !== undefined);
    } finally {
      rmSync(repository, { recursive: true, force: true });
    }
    const outer = models.find((entry) => entry.model_name === "caller");
    expect(outer).toMatchObject({ request_id: "outer" });
    expect(models.filter((entry) => entry.model_name === "probe")).toEqual([{ id: expect.any(Number), model_name: "probe", model_version: 1, parent_id: outer!.id }]);
  });
});

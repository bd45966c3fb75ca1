import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { status } from "@grpc/grpc-js";
import { type RunningServer, startServer } from "../helpers/server-process";
import { parseExposition } from "../server/metrics/prometheus-text";
import { type GrpcCallError, GrpcTestClient } from "./grpc-transport";

/** Identity models whose every execution takes `delayMs`: queueing and batching become observable. */
function identityModel(repository: string, name: string, delayMs: number, extra: string): void {
  const dir = path.join(repository, name);
  mkdirSync(path.join(dir, "1"), { recursive: true });
  writeFileSync(path.join(dir, "config.pbtxt"), `backend: "identity"
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 4 ] } ]
parameters [ { key: "execute_delay_ms" value: { string_value: "${delayMs}" } } ]
${extra}`);
}

interface Stats {
  inference_count: number;
  execution_count: number;
  inference_stats: Record<"success" | "fail" | "queue" | "compute_infer", { count: number; ns: number }>;
  batch_stats: { batch_size: number; compute_infer: { count: number } }[];
}

describe("dynamic batching, instances and queue policy (Triton's scheduler semantics)", () => {
  let repository: string;
  let server: RunningServer;

  beforeAll(async () => {
    repository = mkdtempSync(path.join(os.tmpdir(), "batching-repo-"));
    // The batching, queue policy and priority rules themselves are unit tested on a fake clock
    // (tests/server/core/scheduling/scheduler-rules.test.ts); these models prove that the config and the request
    // parameters reach them, and that their outcomes reach the client.
    identityModel(repository, "batched", 0, "max_batch_size: 8\ndynamic_batching { max_queue_delay_microseconds: 600000 }\ninstance_group [ { count: 1 kind: KIND_CPU } ]");
    identityModel(repository, "unbatched", 100, "max_batch_size: 8\ninstance_group [ { count: 1 kind: KIND_CPU } ]");
    identityModel(repository, "no_batch_dim", 100, "max_batch_size: 0\ninstance_group [ { count: 2 kind: KIND_CPU } ]");
    identityModel(repository, "prioritized", 500, "max_batch_size: 1\ndynamic_batching { priority_levels: 2 default_priority_level: 2 default_queue_policy { default_timeout_microseconds: 30000000 allow_timeout_override: true } }\ninstance_group [ { count: 1 kind: KIND_CPU } ]");
    identityModel(repository, "cancellable", 1000, "max_batch_size: 1\ndynamic_batching { }\ninstance_group [ { count: 1 kind: KIND_CPU } ]");
    identityModel(repository, "cancellable_grpc", 400, "max_batch_size: 1\ndynamic_batching { }\ninstance_group [ { count: 1 kind: KIND_CPU } ]");
    server = await startServer({ repository, services: ["http", "grpc", "metrics"] });
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(repository, { recursive: true, force: true });
  });

  const row = (seed: number): number[] => [seed, seed + 1, seed + 2, seed + 3];

  function infer(model: string, rows: number[][], parameters: Record<string, unknown> = {}, signal?: AbortSignal): Promise<{ status: number; body: { outputs?: { shape: number[]; data: number[] }[]; error?: string } }> {
    const shape = model === "no_batch_dim" ? [4] : [rows.length, 4];
    return fetch(`${server.httpUrl}/v2/models/${model}/infer`, {
      method: "POST", signal,
      body: JSON.stringify({ parameters, inputs: [{ name: "INPUT0", datatype: "INT32", shape, data: rows.flat() }] }),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as { outputs?: { shape: number[]; data: number[] }[]; error?: string } }));
  }

  async function stats(model: string): Promise<Stats> {
    const body = (await (await fetch(`${server.httpUrl}/v2/models/${model}/stats`)).json()) as { model_stats: Stats[] };
    return body.model_stats[0]!;
  }

  const settle = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

  async function pendingRequests(model: string): Promise<number | undefined> {
    const metrics = parseExposition(await fetch(`${server.metricsUrl!}/metrics`).then((r) => r.text()));
    return metrics.value("nv_inference_pending_request_count", { model, version: "1" });
  }

  /** Waits until `count` requests wait in the model's queue (an executing one is not pending). */
  async function untilPending(model: string, count: number): Promise<void> {
    for (const deadline = Date.now() + 30_000; (await pendingRequests(model)) !== count;) {
      if (Date.now() > deadline) throw new Error(`${model} never had ${count} queued request(s)`);
      await settle(20);
    }
  }

  it("holds concurrent requests for max_queue_delay_microseconds and runs them as one batch, every client getting exactly its own rows back", async () => {
    const started = Date.now();
    const results = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => infer("batched", i === 3 ? [row(100 * i), row(100 * i + 50)] : [row(100 * i)])));
    results.forEach((result, index) => {
      const i = index + 1;
      expect(result.status).toBe(200);
      expect(result.body.outputs![0]!.data).toEqual(i === 3 ? [...row(100 * i), ...row(100 * i + 50)] : row(100 * i));
      expect(result.body.outputs![0]!.shape).toEqual([i === 3 ? 2 : 1, 4]);
    });
    // 7 batch elements stay below max_batch_size 8, the preferred size by default: only the 0.6 s delay sends them.
    expect(Date.now() - started).toBeGreaterThanOrEqual(600);
    const s = await stats("batched");
    expect(s.inference_count).toBe(7);
    expect(s.inference_stats.success.count).toBe(6);
    expect(s.execution_count).toBe(1);
    expect(s.batch_stats.map((b) => b.batch_size)).toEqual([7]);
    expect(s.inference_stats.queue.ns).toBeGreaterThanOrEqual(600e6);
  });

  it("runs one request per execution without dynamic_batching, still batching inside a request", async () => {
    await Promise.all([infer("unbatched", [row(0), row(4)]), infer("unbatched", [row(8)]), infer("unbatched", [row(12)])]);
    const s = await stats("unbatched");
    expect(s.execution_count).toBe(3);
    expect(s.inference_count).toBe(4);
  });

  it("serves max_batch_size 0 models one request per execution, spread over instances", async () => {
    const results = await Promise.all([infer("no_batch_dim", [row(1)]), infer("no_batch_dim", [row(2)])]);
    expect(results.map((r) => r.body.outputs![0]!.data)).toEqual([row(1), row(2)]);
    const s = await stats("no_batch_dim");
    expect(s.execution_count).toBe(2);
    expect(s.inference_stats.queue.ns).toBeLessThan(50e6); // two instances: neither waited for the other
  });

  it("takes the priority and timeout request parameters over HTTP: priority 1 runs before the default level, a lowered timeout fails with Triton's 503", async () => {
    const finished: string[] = [];
    const track = (label: string, p: Promise<{ status: number }>): Promise<number> => p.then((r) => {
      finished.push(label);
      return r.status;
    });
    // The only instance takes whichever of the two arrives first; one queued request then means both are in.
    const defaults = [track("default-a", infer("prioritized", [row(0)])), track("default-b", infer("prioritized", [row(1)]))];
    await untilPending("prioritized", 1);
    const high = track("high", infer("prioritized", [row(2)], { priority: 1 }));
    await untilPending("prioritized", 2);
    expect(await infer("prioritized", [row(3)], { timeout: 5000 })).toEqual({ status: 503, body: { error: "Request timeout expired" } });
    expect(await Promise.all([...defaults, high])).toEqual([200, 200, 200]);
    expect(finished[1]).toBe("high");
  });

  it("drops a queued request whose client disconnected, without executing it", async () => {
    const running = infer("cancellable", [row(0)]);
    await settle(50);
    const controller = new AbortController();
    const abandoned = infer("cancellable", [row(1)], {}, controller.signal).catch((e: Error) => e);
    // One request executing and one queued: the only instance takes whichever arrives first, so pending 1 means both
    // are in; the model's 1 s keeps the first running while this is seen.
    await untilPending("cancellable", 1);
    controller.abort();
    expect(await abandoned).toBeInstanceOf(Error);
    await running;
    await settle(100);
    const s = await stats("cancellable");
    expect(s.execution_count).toBe(1);
    expect(s.inference_stats.fail.count).toBe(1);
  });

  it("drops a queued gRPC request whose deadline passed, without executing it", async () => {
    const client = new GrpcTestClient(server.grpcAddress!);
    try {
      // Connect first: the deadline below is for the request, not for setting up the channel on a busy machine.
      await client.unary("ServerLive", {});
      const running = infer("cancellable_grpc", [row(0)]);
      await settle(50);
      const expired = client.unary("ModelInfer", {
        model_name: "cancellable_grpc",
        inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 4], contents: { int_contents: row(1) } }],
      }, { deadline: Date.now() + 100 }).catch((e: GrpcCallError) => e);
      expect(await expired).toMatchObject({ code: status.DEADLINE_EXCEEDED });
      expect((await running).status).toBe(200);
      await settle(100);
      const s = await stats("cancellable_grpc");
      expect(s.execution_count).toBe(1);
      expect(s.inference_stats.fail.count).toBe(1);
    } finally {
      client.close();
    }
  });
});

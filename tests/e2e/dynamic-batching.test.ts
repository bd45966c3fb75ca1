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
    identityModel(repository, "batched", 300, "max_batch_size: 8\ndynamic_batching { }\ninstance_group [ { count: 1 kind: KIND_CPU } ]");
    // Triton's qa/L0_batcher configuration, with a queue delay longer than the test's timeout: only the preferred
    // sizes can release these batches.
    identityModel(repository, "preferred", 1000, "max_batch_size: 8\ndynamic_batching { preferred_batch_size: [ 2, 6 ] max_queue_delay_microseconds: 120000000 }\ninstance_group [ { count: 1 kind: KIND_CPU } ]");
    identityModel(repository, "unbatched", 100, "max_batch_size: 8\ninstance_group [ { count: 1 kind: KIND_CPU } ]");
    identityModel(repository, "no_batch_dim", 100, "max_batch_size: 0\ninstance_group [ { count: 2 kind: KIND_CPU } ]");
    identityModel(repository, "bounded", 400, "max_batch_size: 1\ndynamic_batching { default_queue_policy { max_queue_size: 2 } }\ninstance_group [ { count: 1 kind: KIND_CPU } ]");
    identityModel(repository, "expiring", 400, "max_batch_size: 1\ndynamic_batching { default_queue_policy { default_timeout_microseconds: 50000 allow_timeout_override: true } }\ninstance_group [ { count: 1 kind: KIND_CPU } ]");
    identityModel(repository, "delaying", 300, "max_batch_size: 1\ndynamic_batching { default_queue_policy { timeout_action: DELAY default_timeout_microseconds: 20000 } }\ninstance_group [ { count: 1 kind: KIND_CPU } ]");
    identityModel(repository, "prioritized", 300, "max_batch_size: 1\ndynamic_batching { priority_levels: 2 default_priority_level: 2 }\ninstance_group [ { count: 1 kind: KIND_CPU } ]");
    identityModel(repository, "two_instances", 400, "max_batch_size: 1\ninstance_group [ { count: 2 kind: KIND_CPU } ]");
    identityModel(repository, "one_instance", 400, "max_batch_size: 1\ninstance_group [ { count: 1 kind: KIND_CPU } ]");
    identityModel(repository, "cancellable", 2000, "max_batch_size: 1\ndynamic_batching { }\ninstance_group [ { count: 1 kind: KIND_CPU } ]");
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

  it("forms batches from concurrent requests, and every client gets exactly its own rows back", async () => {
    const first = infer("batched", [row(0)]); // occupies the only instance
    await settle(50);
    const rest = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => infer("batched", i === 3 ? [row(100 * i), row(100 * i + 50)] : [row(100 * i)])));
    expect((await first).body.outputs![0]!.data).toEqual(row(0));
    rest.forEach((result, index) => {
      const i = index + 1;
      expect(result.status).toBe(200);
      expect(result.body.outputs![0]!.data).toEqual(i === 3 ? [...row(100 * i), ...row(100 * i + 50)] : row(100 * i));
      expect(result.body.outputs![0]!.shape).toEqual([i === 3 ? 2 : 1, 4]);
    });
    const s = await stats("batched");
    expect(s.inference_count).toBe(8); // 7 requests, one of them with 2 batch elements
    expect(s.inference_stats.success.count).toBe(7);
    expect(s.execution_count).toBe(2); // the lone first request, then one batch of the other six
    expect(s.batch_stats.map((b) => b.batch_size)).toEqual([1, 7]);
  });

  it("sends a batch as soon as it makes a preferred size, never growing it past the largest (Triton's GetDynamicBatch)", async () => {
    const rows = (n: number, seed: number): number[][] => Array.from({ length: n }, (_, i) => row(seed + 10 * i));
    const first = infer("preferred", rows(6, 0)); // preferred 6: runs at once and occupies the only instance
    await settle(100);
    const three = infer("preferred", rows(3, 100));
    await settle(100);
    const four = infer("preferred", rows(4, 200));
    await settle(100);
    const two = infer("preferred", rows(2, 300));
    // When the instance frees: 3 + 4 would pass the largest preferred 6, so the 3 goes alone; then 4 + 2 make 6.
    const results = await Promise.all([first, three, four, two]);
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(results[2]!.body.outputs![0]!.data).toEqual(rows(4, 200).flat());
    const s = await stats("preferred");
    expect(s.execution_count).toBe(3);
    expect(s.batch_stats.map((b) => [b.batch_size, b.compute_infer.count])).toEqual([[3, 1], [6, 2]]);
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

  it("rejects past max_queue_size with Triton's 503", async () => {
    const running = infer("bounded", [row(0)]);
    await settle(50);
    const queued = [infer("bounded", [row(1)]), infer("bounded", [row(2)])];
    await settle(50);
    const rejected = await infer("bounded", [row(3)]);
    expect(rejected).toEqual({ status: 503, body: { error: "Exceeds maximum queue size" } });
    expect((await Promise.all([running, ...queued])).map((r) => r.status)).toEqual([200, 200, 200]);
  });

  it("expires queued requests after default_timeout_microseconds (REJECT) with Triton's 503", async () => {
    const running = infer("expiring", [row(0)]);
    await settle(50);
    const expired = await infer("expiring", [row(1)]);
    expect(expired).toEqual({ status: 503, body: { error: "Request timeout expired" } });
    expect((await running).status).toBe(200);
  });

  it("lets a request lower its timeout when allow_timeout_override is set", async () => {
    const running = infer("expiring", [row(0)]);
    await settle(50);
    const started = Date.now();
    const expired = await infer("expiring", [row(1)], { timeout: 5000 });
    expect(expired.status).toBe(503);
    expect(Date.now() - started).toBeLessThan(300);
    await running;
  });

  it("keeps timed-out requests under DELAY and still executes them", async () => {
    const results = await Promise.all([infer("delaying", [row(0)]), infer("delaying", [row(1)]), infer("delaying", [row(2)])]);
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(results.map((r) => r.body.outputs![0]!.data)).toEqual([row(0), row(1), row(2)]);
  });

  it("serves priority 1 before the default level", async () => {
    const finished: string[] = [];
    const track = (label: string, p: Promise<unknown>): Promise<void> => p.then(() => void finished.push(label));
    const running = track("running", infer("prioritized", [row(0)]));
    await settle(50);
    const low = track("low", infer("prioritized", [row(1)]));
    await settle(20);
    const high = track("high", infer("prioritized", [row(2)], { priority: 1 }));
    await Promise.all([running, low, high]);
    expect(finished).toEqual(["running", "high", "low"]);
  });

  it("drops a queued request whose client disconnected, without executing it", async () => {
    const running = infer("cancellable", [row(0)]);
    await settle(50);
    const controller = new AbortController();
    const abandoned = infer("cancellable", [row(1)], {}, controller.signal).catch((e: Error) => e);
    // One request executing and one queued: the only instance takes whichever arrives first, so pending 1 means both
    // are in; the model's 2 s keeps the first running while this is seen.
    for (const deadline = Date.now() + 30_000; (await pendingRequests("cancellable")) !== 1;) {
      if (Date.now() > deadline) throw new Error("the abandoned request never queued");
      await settle(20);
    }
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

  it("runs two instances in parallel: with two, neither request queues; with one, the second waits", async () => {
    await Promise.all([infer("two_instances", [row(0)]), infer("two_instances", [row(1)])]);
    await Promise.all([infer("one_instance", [row(0)]), infer("one_instance", [row(1)])]);
    const parallel = await stats("two_instances");
    const serial = await stats("one_instance");
    expect(parallel.execution_count).toBe(2);
    expect(serial.execution_count).toBe(2);
    // Queue time is the scheduler's own record: it shows whether a request waited for an instance.
    expect(parallel.inference_stats.queue.ns).toBeLessThan(100e6);
    expect(serial.inference_stats.queue.ns).toBeGreaterThan(300e6);
  });
});

import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CACHE_ENTRY_OVERHEAD_BYTES } from "../../server/core/request/response-cache";
import { type RunningServer, startServer } from "../helpers/server-process";
import { writeSimpleModel } from "../helpers/simple-model";

/** simple answers two INT32[16] outputs: 128 bytes of tensors per response. */
const ENTRY_BYTES = 128 + CACHE_ENTRY_OVERHEAD_BYTES;

function simpleModel(repository: string, name: string, extra: string): void {
  writeSimpleModel(repository, name, `max_batch_size: 8\n${extra}`);
}

type Stats = {
  execution_count: number; inference_count: number;
  inference_stats: Record<"success" | "cache_hit" | "cache_miss" | "compute_infer", { count: number; ns: number }>;
};
type Output = { name: string; data: number[] };

describe("response cache (--cache-config local,size=N; response_cache { enable: true })", () => {
  let repository: string;
  let server: RunningServer;
  let uncachedServer: RunningServer;

  const infer = async (target: RunningServer, model: string, seed: number, outputs?: string[]): Promise<Output[]> => {
    const response = await fetch(`${target.httpUrl}/v2/models/${model}/infer`, {
      method: "POST",
      body: JSON.stringify({
        inputs: ["INPUT0", "INPUT1"].map((name, k) => ({ name, datatype: "INT32", shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => seed * (k + 1) + i) })),
        ...(outputs === undefined ? {} : { outputs: outputs.map((name) => ({ name })) }),
      }),
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { outputs: Output[] }).outputs;
  };
  const stats = async (target: RunningServer, model: string): Promise<Stats> =>
    ((await (await fetch(`${target.httpUrl}/v2/models/${model}/stats`)).json()) as { model_stats: Stats[] }).model_stats[0]!;

  beforeAll(async () => {
    repository = mkdtempSync(path.join(os.tmpdir(), "cache-repo-"));
    simpleModel(repository, "cached", "response_cache { enable: true }");
    simpleModel(repository, "evicting", "response_cache { enable: true }");
    simpleModel(repository, "plain", "");
    // Room for one simple response and a half: a second distinct response evicts the first.
    [server, uncachedServer] = await Promise.all([
      startServer({ repository, services: ["http", "metrics"], args: ["--cache-config", `local,size=${Math.floor(ENTRY_BYTES * 1.5)}`] }),
      startServer({ repository }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([server?.stop(), uncachedServer?.stop()]);
    rmSync(repository, { recursive: true, force: true });
  });

  it("answers a repeated request from the cache: same outputs, no execution, counted as a hit", async () => {
    const first = await infer(server, "cached", 3);
    const second = await infer(server, "cached", 3);
    expect(second).toEqual(first);
    expect(first.find((o) => o.name === "OUTPUT0")!.data).toEqual(Array.from({ length: 16 }, (_, i) => 3 + i + 6 + i));
    const s = await stats(server, "cached");
    expect(s).toMatchObject({ execution_count: 1, inference_count: 1 });
    expect(s.inference_stats.success.count).toBe(2);
    expect(s.inference_stats.cache_hit.count).toBe(1);
    expect(s.inference_stats.cache_miss.count).toBe(1);
    expect(s.inference_stats.compute_infer.count).toBe(1);
    const metrics = await (await fetch(`${server.metricsUrl!}/metrics`)).text();
    expect(metrics).toContain('nv_cache_num_hits_per_model{model="cached",version="1"} 1');
    expect(metrics).toContain('nv_cache_num_misses_per_model{model="cached",version="1"} 1');
    expect(metrics).toContain('nv_inference_exec_count{model="cached",version="1"} 1');
  });

  it("keys on the inputs and on the outputs asked for", async () => {
    const before = (await stats(server, "cached")).execution_count;
    await infer(server, "cached", 4);
    const onlyDiff = await infer(server, "cached", 3, ["OUTPUT1"]);
    expect(onlyDiff.map((o) => o.name)).toEqual(["OUTPUT1"]);
    expect((await stats(server, "cached")).execution_count).toBe(before + 2);
  });

  it("evicts the least recently used response when the size is reached", async () => {
    await infer(server, "evicting", 1);
    await infer(server, "evicting", 2); // evicts seed 1 (and whatever else the cache held)
    await infer(server, "evicting", 2); // hit
    await infer(server, "evicting", 1); // miss again
    expect(await stats(server, "evicting")).toMatchObject({ execution_count: 3, inference_stats: { cache_hit: { count: 1 }, cache_miss: { count: 3 } } });
  });

  it("leaves models without response_cache, and every model of a server without --cache-config, uncached", async () => {
    await infer(server, "plain", 5);
    await infer(server, "plain", 5);
    await infer(uncachedServer, "cached", 5);
    await infer(uncachedServer, "cached", 5);
    for (const s of [await stats(server, "plain"), await stats(uncachedServer, "cached")]) {
      expect(s).toMatchObject({ execution_count: 2, inference_stats: { cache_hit: { count: 0 }, cache_miss: { count: 0 } } });
    }
  });
});

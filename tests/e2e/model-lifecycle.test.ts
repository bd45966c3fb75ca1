import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../helpers/server-process";
import { writeSimpleModel } from "../helpers/simple-model";



function slowIdentity(repository: string, name: string, delayMs: number): void {
  mkdirSync(path.join(repository, name, "1"), { recursive: true });
  writeFileSync(path.join(repository, name, "config.pbtxt"), `backend: "identity"
max_batch_size: 1
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 2 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 2 ] } ]
parameters [ { key: "execute_delay_ms" value: { string_value: "${delayMs}" } } ]
instance_group [ { count: 1 kind: KIND_CPU } ]`);
}

/** Polls `check` every 100 ms until it holds; fails after `timeoutMs` with the last value seen. */
async function until<T>(read: () => Promise<T>, check: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

type IndexEntry = { name: string; version?: string; state: string; reason: string };

const simpleBody = JSON.stringify({
  inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) })),
});

describe("poll model control mode (--model-control-mode poll)", () => {
  let repository: string;
  let secondRepository: string;
  let server: RunningServer;
  const index = async (): Promise<IndexEntry[]> => (await (await fetch(`${server.httpUrl}/v2/repository/index`, { method: "POST", body: "{}" })).json()) as IndexEntry[];
  const maxBatchSize = async (model: string): Promise<number | undefined> => {
    const response = await fetch(`${server.httpUrl}/v2/models/${model}/config`);
    return response.status === 200 ? ((await response.json()) as { max_batch_size: number }).max_batch_size : undefined;
  };

  beforeAll(async () => {
    repository = mkdtempSync(path.join(os.tmpdir(), "poll-repo-"));
    secondRepository = mkdtempSync(path.join(os.tmpdir(), "poll-repo-2-"));
    writeSimpleModel(repository, "first", "max_batch_size: 8");
    server = await startServer({
      repository, args: ["--model-repository", secondRepository, "--model-control-mode", "poll", "--repository-poll-secs", "1", "--exit-on-error", "false"],
    });
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(repository, { recursive: true, force: true });
    rmSync(secondRepository, { recursive: true, force: true });
  });

  it("loads a model that appears in the repository", async () => {
    writeSimpleModel(repository, "second", "max_batch_size: 2");
    await until(index, (entries) => entries.some((e) => e.name === "second" && e.state === "READY"));
    expect((await fetch(`${server.httpUrl}/v2/models/second/infer`, { method: "POST", body: simpleBody })).status).toBe(200);
  });

  it("reloads a model whose config changed", async () => {
    writeSimpleModel(repository, "first", "max_batch_size: 4");
    expect(await until(() => maxBatchSize("first"), (value) => value === 4)).toBe(4);
  });

  it("keeps serving the loaded model when a reload fails", async () => {
    writeFileSync(path.join(repository, "first", "config.pbtxt"), 'platform: "onnxruntime_onnx"\nmax_batch_size: 4\nbogus_field: 1');
    await until(async () => server.logs(), (logs) => /poll: reloading 'first' failed, still serving what was loaded before: .*bogus_field/.test(logs));
    expect(await maxBatchSize("first")).toBe(4);
    expect((await fetch(`${server.httpUrl}/v2/models/first/infer`, { method: "POST", body: simpleBody })).status).toBe(200);
  });

  it("unloads a model whose directory is removed", async () => {
    rmSync(path.join(repository, "second"), { recursive: true });
    await until(index, (entries) => !entries.some((e) => e.name === "second"));
    expect((await fetch(`${server.httpUrl}/v2/models/second/ready`)).status).toBe(400);
  });

  it("stops serving a model that appears in a second repository, and serves it again once it is unique", async () => {
    writeSimpleModel(repository, "first", "max_batch_size: 4"); // mends the config the previous test broke
    writeSimpleModel(secondRepository, "first", "max_batch_size: 4");
    await until(index, (entries) => entries.some((e) => e.name === "first" && e.state === "UNAVAILABLE" && e.reason === "model appears in two or more repositories"));
    rmSync(path.join(secondRepository, "first"), { recursive: true });
    await until(index, (entries) => entries.some((e) => e.name === "first" && e.state === "READY"));
  });

  it("refuses explicit load and unload, as Triton does outside explicit mode", async () => {
    const response = await fetch(`${server.httpUrl}/v2/repository/models/first/unload`, { method: "POST" });
    expect(response.status).toBe(503);
    expect(((await response.json()) as { error: string }).error).toBe("explicit model load / unload is not allowed if polling is enabled");
  });
});

describe("unload and reload in explicit mode", () => {
  let repository: string;
  let server: RunningServer;
  const post = (url: string, body?: string): Promise<Response> =>
    fetch(`${server.httpUrl}${url}`, { method: "POST", body, headers: { "content-type": "application/json" } });

  beforeAll(async () => {
    repository = mkdtempSync(path.join(os.tmpdir(), "lifecycle-repo-"));
    slowIdentity(repository, "slow", 400);
    writeSimpleModel(repository, "steady", "max_batch_size: 8");
    server = await startServer({ repository, args: ["--model-control-mode", "explicit", "--load-model", "*"] });
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(repository, { recursive: true, force: true });
  });

  it("answers the requests a model accepted (executing and queued) before its unload completes", async () => {
    const infer = (seed: number): Promise<{ status: number; data: number[] | undefined }> =>
      post("/v2/models/slow/infer", JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 2], data: [seed, seed + 1] }] }))
        .then(async (r) => ({ status: r.status, data: ((await r.json()) as { outputs?: { data: number[] }[] }).outputs?.[0]?.data }));
    const executing = infer(10);
    const queued = infer(20);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const unload = post("/v2/repository/models/slow/unload");
    await new Promise((resolve) => setTimeout(resolve, 50));
    const late = await infer(30);
    expect(late.status).toBe(404); // the unload took it out of service at once
    const [first, second, unloaded] = await Promise.all([executing, queued, unload]);
    expect(first).toMatchObject({ status: 200, data: [10, 11] });
    expect(second).toMatchObject({ status: 200, data: [20, 21] });
    expect(unloaded.status).toBe(200);
  });

  it("keeps the loaded version when a reload fails, and says why", async () => {
    writeFileSync(path.join(repository, "steady", "config.pbtxt"), 'platform: "onnxruntime_onnx"\nmax_batch_size: 8\nbogus_field: 1');
    const response = await post("/v2/repository/models/steady/load");
    // As in Triton, a config that does not parse fails the poll (INTERNAL) rather than the load.
    expect(response.status).toBe(500);
    expect(((await response.json()) as { error: string }).error).toMatch(/^failed to load 'steady', failed to poll from model repository: .*bogus_field/);
    expect((await fetch(`${server.httpUrl}/v2/models/steady/ready`)).status).toBe(200);
    expect((await post("/v2/models/steady/infer", simpleBody)).status).toBe(200);
  });
});

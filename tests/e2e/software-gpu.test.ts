import { copyFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { float16Value } from "../../protocol/float16";
import { softwareGpuEnvironment } from "../helpers/software-gpu";
import { mugInputFp16, squeezenetRepository } from "../helpers/squeezenet";
import { type RunningServer, startServer } from "../helpers/server-process";
import { writeSimpleModel } from "../helpers/simple-model";
import { tensorValues, withBinary } from "./http-transport";

/**
 * The GPU code path on every machine: KIND_GPU models served by ONNX Runtime's WebGPU provider on a software adapter
 * (Mesa's lavapipe, unpacked by `npm test`'s pretest), exactly as on an NVIDIA GPU. Before every WebGPU session of a
 * device shared one thread, `count: 2` crashed the server with SIGSEGV at its first concurrent requests.
 */
const GPU_SQUEEZENET = [
  'platform: "onnxruntime_onnx"',
  "max_batch_size: 0",
  'input [ { name: "data_0" data_type: TYPE_FP16 dims: [ 1, 3, 224, 224 ] } ]',
  'output [ { name: "softmaxout_1" data_type: TYPE_FP16 dims: [ 1, 1000, 1, 1 ] } ]',
].join("\n");

const instanceGroup = (count: number, kind = "KIND_GPU"): string => `instance_group [ { count: ${count} kind: ${kind} } ]`;

describe("KIND_GPU on a software WebGPU adapter (--allow-software-gpu)", () => {
  let server: RunningServer;
  let repository: string;
  beforeAll(async () => {
    // `squeezenet` on the CPU provider is the reference the GPU instances' outputs are held to.
    repository = squeezenetRepository();
    writeFileSync(path.join(repository, "squeezenet", "config.pbtxt"), `${GPU_SQUEEZENET}\n${instanceGroup(1, "KIND_CPU")}`);
    mkdirSync(path.join(repository, "squeezenet_gpu", "1"), { recursive: true });
    copyFileSync(path.join(repository, "squeezenet", "1", "model.onnx"), path.join(repository, "squeezenet_gpu", "1", "model.onnx"));
    writeFileSync(path.join(repository, "squeezenet_gpu", "config.pbtxt"), `${GPU_SQUEEZENET}\n${instanceGroup(2)}`);
    // KIND_AUTO: the software adapter counts as GPU 0 under the flag, so this batching model lands there too.
    writeSimpleModel(repository, "simple_gpu", "max_batch_size: 8\ndynamic_batching { max_queue_delay_microseconds: 2000 }\ninstance_group [ { count: 3 } ]\n");
    server = await startServer({
      repository, services: ["http", "metrics"], env: softwareGpuEnvironment(), timeoutMs: 180_000,
      args: ["--allow-software-gpu", "--model-control-mode", "explicit", "--load-model", "*"],
    });
  }, 200_000);
  afterAll(async () => {
    await server?.stop();
    if (repository !== undefined) rmSync(repository, { recursive: true, force: true });
  });

  async function squeezenet(model: string): Promise<number[]> {
    const input = mugInputFp16();
    const { body, headers } = withBinary({
      inputs: [{ name: "data_0", datatype: "FP16", shape: [1, 3, 224, 224], parameters: { binary_data_size: input.byteLength } }],
      outputs: [{ name: "softmaxout_1", parameters: { binary_data: true } }],
    }, input);
    const response = await fetch(`${server.httpUrl}/v2/models/${model}/infer`, { method: "POST", body, headers });
    const bytes = new Uint8Array(await response.arrayBuffer());
    expect(response.status, Buffer.from(bytes).toString()).toBe(200);
    const length = Number(response.headers.get("inference-header-content-length"));
    return (tensorValues("FP16", bytes.subarray(length)) as number[]).map(float16Value);
  }

  async function simple(a: number): Promise<number[]> {
    const response = await fetch(`${server.httpUrl}/v2/models/simple_gpu/infer`, {
      method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => a + i) })) }),
    });
    const text = await response.text();
    expect(response.status, text).toBe(200);
    return (JSON.parse(text) as { outputs: { name: string; data: number[] }[] }).outputs.find((o) => o.name === "OUTPUT0")!.data;
  }

  /** Everything at once: both GPU models and the CPU reference, several requests each. */
  async function concurrentLoad(): Promise<void> {
    const reference = await squeezenet("squeezenet");
    const [gpu, sums] = await Promise.all([
      Promise.all(Array.from({ length: 6 }, () => squeezenet("squeezenet_gpu"))),
      Promise.all(Array.from({ length: 12 }, (_, i) => simple(i))),
    ]);
    for (const probabilities of gpu) {
      expect(probabilities.indexOf(Math.max(...probabilities))).toBe(504);
      // FP16 softmax on two providers: the same up to a few FP16 steps near 1.
      expect(Math.max(...probabilities.map((p, i) => Math.abs(p - reference[i]!)))).toBeLessThan(5e-3);
    }
    sums.forEach((sum, a) => expect(sum).toEqual(Array.from({ length: 16 }, (_, i) => 2 * (a + i))));
    expect(server.process.exitCode).toBeNull();
  }

  async function placements(): Promise<string[]> {
    const text = await (await fetch(`${server.metricsUrl}/metrics`)).text();
    return text.split("\n").filter((line) => line.startsWith("inference_instance_placement{") && !line.includes('provider="cpu"')).sort();
  }

  async function load(model: string, count: number): Promise<void> {
    const config = (await (await fetch(`${server.httpUrl}/v2/models/${model}/config`)).json()) as Record<string, unknown>;
    const response = await fetch(`${server.httpUrl}/v2/repository/models/${model}/load`, {
      method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ parameters: { config: JSON.stringify({ ...config, instance_group: [{ kind: "KIND_GPU", count }] }) } }),
    });
    expect(response.status, await response.text()).toBe(200);
  }

  it("places KIND_GPU and KIND_AUTO instances on the software adapter, logged and shown in the placement metric", async () => {
    expect(server.logs()).toMatch(/no NVIDIA GPU; KIND_GPU and KIND_AUTO instances run on a software WebGPU adapter \(.*lvp_icd\.json\)/);
    expect(server.logs()).toContain("model 'squeezenet_gpu' version 1: 2 x KIND_GPU on webgpu (device 0, software adapter)");
    expect(server.logs()).toContain("model 'simple_gpu' version 1: 3 x KIND_GPU on webgpu (device 0, software adapter)");
    expect(await placements()).toEqual([
      'inference_instance_placement{model="simple_gpu",version="1",kind="KIND_GPU",provider="webgpu",device="0",adapter="software"} 3',
      'inference_instance_placement{model="squeezenet_gpu",version="1",kind="KIND_GPU",provider="webgpu",device="0",adapter="software"} 2',
    ]);
  });

  it("serves several GPU instances of two models at once, outputs as the CPU provider's, without crashing", async () => {
    await concurrentLoad();
  });

  it("reloads with another count (4, then 1) and serves after each", async () => {
    await load("squeezenet_gpu", 4);
    await concurrentLoad();
    await load("squeezenet_gpu", 1);
    await concurrentLoad();
    expect((await placements()).find((line) => line.includes('model="squeezenet_gpu"'))).toMatch(/ 1$/);
  }, 180_000);

  it("unloads a GPU model while the other keeps serving, and loads it again", async () => {
    expect((await fetch(`${server.httpUrl}/v2/repository/models/squeezenet_gpu/unload`, { method: "POST" })).status).toBe(200);
    expect(await simple(1)).toHaveLength(16);
    expect((await fetch(`${server.httpUrl}/v2/repository/models/simple_gpu/unload`, { method: "POST" })).status).toBe(200);
    // The device's thread ended with its last session; a load (config.pbtxt's count: 2) starts a new one.
    expect((await fetch(`${server.httpUrl}/v2/repository/models/squeezenet_gpu/load`, { method: "POST" })).status).toBe(200);
    expect((await squeezenet("squeezenet_gpu")).length).toBe(1000);
    expect(server.process.exitCode).toBeNull();
  }, 120_000);
});

describe("a software adapter without --allow-software-gpu", () => {
  it("is not used: a KIND_GPU model fails to load with how to allow it, the server stays up", async () => {
    const repository = squeezenetRepository();
    writeFileSync(path.join(repository, "squeezenet", "config.pbtxt"), `${GPU_SQUEEZENET}\n${instanceGroup(1)}`);
    const server = await startServer({ repository, env: softwareGpuEnvironment(), args: ["--exit-on-error", "false"] });
    try {
      const index = (await (await fetch(`${server.httpUrl}/v2/repository/index`, { method: "POST" })).json()) as { name: string; state: string; reason: string }[];
      expect(index[0]).toMatchObject({ name: "squeezenet", state: "UNAVAILABLE", reason: expect.stringMatching(/No supported adapters.*--allow-software-gpu/s) });
    } finally {
      await server.stop();
      rmSync(repository, { recursive: true, force: true });
    }
  });
});

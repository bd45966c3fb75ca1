import { afterEach, describe, expect, it } from "vitest";
import type { ModelGauges } from "../../../server/core/index";
import { LATENCY_BUCKETS_SECONDS, ServerMetrics, type ServerMetricsSettings } from "../../../server/metrics/index";
import { type Exposition, parseExposition } from "./prometheus-text";

const SIMPLE = { model: "simple", version: "1" };

function gauges(modelName: string, modelVersion: string, values: Partial<ModelGauges> = {}): ModelGauges {
  return { modelName, modelVersion, pendingRequests: 0, queueDepth: 0, instanceCount: 1, instanceBusySeconds: 0, instanceRestarts: 0, placements: [], ...values };
}

const created: ServerMetrics[] = [];
afterEach(() => {
  for (const metrics of created.splice(0)) metrics.close();
});

/** Server metrics with only what a test names; no real /proc, nvidia-smi or process metrics unless asked for. */
function serverMetrics(settings: Partial<ServerMetricsSettings> = {}): ServerMetrics {
  const metrics = new ServerMetrics({
    modelGauges: () => [gauges("simple", "1")],
    cpuMetrics: false,
    gpuMetrics: false,
    intervalMs: 60_000,
    processMetrics: false,
    ...settings,
  });
  created.push(metrics);
  return metrics;
}

async function scrape(metrics: ServerMetrics): Promise<Exposition> {
  return parseExposition(await metrics.exposition());
}

const TRITON_COUNTERS = [
  "nv_inference_request_success", "nv_inference_request_failure", "nv_inference_count", "nv_inference_exec_count",
  "nv_inference_request_duration_us", "nv_inference_queue_duration_us", "nv_inference_compute_input_duration_us",
  "nv_inference_compute_infer_duration_us", "nv_inference_compute_output_duration_us",
];

describe("per-model metrics fed by core observer calls", () => {
  it("count requests, inferences and executions with Triton's names, types and labels", async () => {
    const metrics = serverMetrics();
    const request = { ...{ modelName: "simple", modelVersion: "1" }, requestNs: 2_500_000, queueNs: 400_000 };
    for (let i = 0; i < 3; i++) metrics.observer.requestCompleted({ ...request, failureReason: undefined });
    metrics.observer.requestCompleted({ ...request, failureReason: "REJECTED", queueNs: 0 });
    metrics.observer.requestCompleted({ ...request, failureReason: "OTHER", queueNs: 0 });
    metrics.observer.requestCompleted({ ...request, failureReason: "OTHER", queueNs: 0 });
    const execution = { modelName: "simple", modelVersion: "1", computeInputNs: 10_000, computeInferNs: 300_000, computeOutputNs: 20_000 };
    metrics.observer.executionCompleted({ ...execution, batchSize: 5, requestCount: 2 });
    metrics.observer.executionCompleted({ ...execution, batchSize: 1, requestCount: 1 });

    const exposition = await scrape(metrics);
    for (const name of TRITON_COUNTERS) expect(exposition.types.get(name), name).toBe("counter");
    expect(exposition.value("nv_inference_request_success", SIMPLE)).toBe(3);
    expect(exposition.value("nv_inference_request_failure", { ...SIMPLE, reason: "REJECTED" })).toBe(1);
    expect(exposition.value("nv_inference_request_failure", { ...SIMPLE, reason: "OTHER" })).toBe(2);
    expect(exposition.value("nv_inference_request_failure", { ...SIMPLE, reason: "BACKEND" })).toBe(0);
    expect(exposition.value("nv_inference_request_failure", { ...SIMPLE, reason: "CANCELED" })).toBe(0);
    expect(exposition.value("nv_inference_count", SIMPLE)).toBe(6);
    expect(exposition.value("nv_inference_exec_count", SIMPLE)).toBe(2);
    // Durations cover successful requests only, in whole microseconds.
    expect(exposition.value("nv_inference_request_duration_us", SIMPLE)).toBe(7500);
    expect(exposition.value("nv_inference_queue_duration_us", SIMPLE)).toBe(1200);
    // Each request of an execution is charged that execution's compute time: 2 + 1 requests.
    expect(exposition.value("nv_inference_compute_input_duration_us", SIMPLE)).toBe(30);
    expect(exposition.value("nv_inference_compute_infer_duration_us", SIMPLE)).toBe(900);
    expect(exposition.value("nv_inference_compute_output_duration_us", SIMPLE)).toBe(60);
    expect(exposition.select("nv_inference_request_success").map((s) => s.labels)).toEqual([SIMPLE]);
  });

  it("record successful request and queue latencies in second histograms with buckets from 100 µs to 30 s", async () => {
    const metrics = serverMetrics();
    for (const [requestNs, queueNs] of [[80_000, 0], [3_000_000, 1_000_000], [700_000_000, 650_000_000]] as const) {
      metrics.observer.requestCompleted({ modelName: "simple", modelVersion: "1", failureReason: undefined, requestNs, queueNs });
    }
    metrics.observer.requestCompleted({ modelName: "simple", modelVersion: "1", failureReason: "BACKEND", requestNs: 40_000_000_000, queueNs: 0 });

    const exposition = await scrape(metrics);
    expect(exposition.types.get("inference_request_duration_seconds")).toBe("histogram");
    expect(exposition.types.get("inference_queue_duration_seconds")).toBe("histogram");
    const bucketBounds = exposition.select("inference_request_duration_seconds_bucket", SIMPLE).map((s) => s.labels["le"]);
    expect(bucketBounds).toEqual([...LATENCY_BUCKETS_SECONDS.map(String), "+Inf"]);
    expect(LATENCY_BUCKETS_SECONDS[0]).toBe(0.0001);
    expect(LATENCY_BUCKETS_SECONDS.at(-1)).toBe(30);
    const requestBucket = (le: string): number => exposition.value("inference_request_duration_seconds_bucket", { ...SIMPLE, le });
    expect([requestBucket("0.0001"), requestBucket("0.0025"), requestBucket("0.005"), requestBucket("0.5"), requestBucket("1"), requestBucket("+Inf")])
      .toEqual([1, 1, 2, 2, 3, 3]);
    expect(exposition.value("inference_request_duration_seconds_count", SIMPLE)).toBe(3);
    expect(exposition.value("inference_request_duration_seconds_sum", SIMPLE)).toBeCloseTo(0.70308, 9);
    expect(exposition.value("inference_queue_duration_seconds_bucket", { ...SIMPLE, le: "0.0001" })).toBe(1);
    expect(exposition.value("inference_queue_duration_seconds_bucket", { ...SIMPLE, le: "0.001" })).toBe(2);
    expect(exposition.value("inference_queue_duration_seconds_bucket", { ...SIMPLE, le: "0.5" })).toBe(2);
    expect(exposition.value("inference_queue_duration_seconds_bucket", { ...SIMPLE, le: "1" })).toBe(3);
    expect(exposition.value("inference_queue_duration_seconds_sum", SIMPLE)).toBeCloseTo(0.651, 9);
  });

  it("export every series of a loaded model at zero before its first request, so rates and ratios read 0", async () => {
    const exposition = await scrape(serverMetrics());
    for (const name of TRITON_COUNTERS.filter((n) => n !== "nv_inference_request_failure")) expect(exposition.value(name, SIMPLE), name).toBe(0);
    expect(exposition.select("nv_inference_request_failure", SIMPLE).map((s) => [s.labels["reason"], s.value]))
      .toEqual([["REJECTED", 0], ["CANCELED", 0], ["BACKEND", 0], ["OTHER", 0]]);
    expect(exposition.value("inference_request_duration_seconds_bucket", { ...SIMPLE, le: "+Inf" })).toBe(0);
    expect(exposition.value("inference_queue_duration_seconds_count", SIMPLE)).toBe(0);
  });

  it("read pending requests, queue depth, instances, busy time and restarts from the core at scrape time", async () => {
    let loaded = [gauges("simple", "1", { pendingRequests: 7, queueDepth: 5, instanceCount: 2, instanceBusySeconds: 12.5, instanceRestarts: 3 })];
    const metrics = serverMetrics({ modelGauges: () => loaded });
    let exposition = await scrape(metrics);
    expect(exposition.types.get("nv_inference_pending_request_count")).toBe("gauge");
    expect(exposition.types.get("inference_queue_depth")).toBe("gauge");
    expect(exposition.types.get("inference_instance_count")).toBe("gauge");
    expect(exposition.types.get("inference_instance_busy_seconds_total")).toBe("counter");
    expect(exposition.value("nv_inference_pending_request_count", SIMPLE)).toBe(7);
    expect(exposition.value("inference_queue_depth", SIMPLE)).toBe(5);
    expect(exposition.value("inference_instance_count", SIMPLE)).toBe(2);
    expect(exposition.value("inference_instance_busy_seconds_total", SIMPLE)).toBe(12.5);
    expect(exposition.types.get("inference_instance_restarts_total")).toBe("counter");
    expect(exposition.value("inference_instance_restarts_total", SIMPLE)).toBe(3);

    loaded = [gauges("simple", "1", { instanceBusySeconds: 13.25 })];
    exposition = await scrape(metrics);
    expect(exposition.value("nv_inference_pending_request_count", SIMPLE)).toBe(0);
    expect(exposition.value("inference_instance_busy_seconds_total", SIMPLE)).toBe(13.25);
  });

  it("count instances by kind, execution provider and device, and forget placements that are gone", async () => {
    let loaded = [gauges("resnet50", "1", {
      placements: [
        { kind: "KIND_GPU", deviceId: 0, provider: "webgpu" }, { kind: "KIND_GPU", deviceId: 0, provider: "webgpu" },
        { kind: "KIND_CPU", deviceId: 0, provider: "cpu" },
      ],
    })];
    const metrics = serverMetrics({ modelGauges: () => loaded });
    let exposition = await scrape(metrics);
    expect(exposition.types.get("inference_instance_placement")).toBe("gauge");
    const resnet = { model: "resnet50", version: "1" };
    expect(exposition.value("inference_instance_placement", { ...resnet, kind: "KIND_GPU", provider: "webgpu", device: "0" })).toBe(2);
    expect(exposition.value("inference_instance_placement", { ...resnet, kind: "KIND_CPU", provider: "cpu", device: "" })).toBe(1);

    loaded = [gauges("resnet50", "1", { placements: [{ kind: "KIND_CPU", deviceId: 0, provider: "cpu" }] })];
    exposition = await scrape(metrics);
    expect(exposition.select("inference_instance_placement").map((s) => s.labels["provider"])).toEqual(["cpu"]);
  });

  it("keep versions apart and drop the series of a version that is unloaded", async () => {
    let loaded = [gauges("simple", "1"), gauges("simple", "2")];
    const metrics = serverMetrics({ modelGauges: () => loaded });
    const success = (modelVersion: string): void =>
      metrics.observer.requestCompleted({ modelName: "simple", modelVersion, failureReason: undefined, requestNs: 1000, queueNs: 0 });
    success("1");
    success("2");
    success("2");
    let exposition = await scrape(metrics);
    expect(exposition.value("nv_inference_request_success", { model: "simple", version: "1" })).toBe(1);
    expect(exposition.value("nv_inference_request_success", { model: "simple", version: "2" })).toBe(2);

    loaded = [gauges("simple", "2")];
    exposition = await scrape(metrics);
    const versionsOf = (name: string): string[] => [...new Set(exposition.select(name).map((s) => s.labels["version"]!))];
    for (const name of [...TRITON_COUNTERS, "inference_request_duration_seconds_bucket", "inference_queue_depth", "nv_inference_pending_request_count"]) {
      expect(versionsOf(name), name).toEqual(["2"]);
    }
  });
});

describe("host metrics", () => {
  const stat = (user: number, system: number, idle: number, iowait: number): string =>
    `cpu  ${user} 0 ${system} ${idle} ${iowait} 0 0 0 0 0\ncpu0 ${user} 0 ${system} ${idle} ${iowait} 0 0 0 0 0\nintr 1 2 3\n`;
  const meminfo = "MemTotal:       16384000 kB\nMemFree:         1024000 kB\nMemAvailable:    4096000 kB\nBuffers:          100 kB\n";

  it("export CPU utilization over the last interval and memory from /proc, without labels", async () => {
    let procStat = stat(100, 100, 700, 100);
    const metrics = serverMetrics({ cpuMetrics: true, readProc: (file) => (file === "/proc/stat" ? procStat : meminfo) });
    let exposition = await scrape(metrics);
    expect(exposition.types.get("nv_cpu_utilization")).toBe("gauge");
    expect(exposition.select("nv_cpu_memory_total_bytes")).toEqual([{ name: "nv_cpu_memory_total_bytes", labels: {}, value: 16384000 * 1024 }]);
    expect(exposition.value("nv_cpu_memory_used_bytes")).toBe((16384000 - 4096000) * 1024);

    procStat = stat(250, 150, 800, 100);
    await metrics.sample();
    exposition = await scrape(metrics);
    // 300 ticks passed, 100 of them idle.
    expect(exposition.value("nv_cpu_utilization")).toBeCloseTo(2 / 3, 12);
  });

  it("leave the CPU metrics out where /proc cannot be read or --allow-cpu-metrics is false", async () => {
    const noProc = serverMetrics({ cpuMetrics: true, readProc: () => { throw new Error("ENOENT"); } });
    expect([...(await scrape(noProc)).types.keys()].filter((name) => name.startsWith("nv_cpu_"))).toEqual([]);
    const disabled = serverMetrics({ cpuMetrics: false, readProc: () => meminfo });
    expect(await disabled.exposition()).not.toContain("nv_cpu_");
  });
});

describe("GPU metrics", () => {
  const twoGpus = "GPU-11111111-2222-3333-4444-555555555555, 35, 15360, 1024\nGPU-66666666-7777-8888-9999-000000000000, 100, 15360, [N/A]\n";

  it("export one series per GPU uuid from nvidia-smi", async () => {
    const calls: (readonly string[])[] = [];
    const metrics = serverMetrics({ gpuMetrics: true, runNvidiaSmi: (args) => { calls.push(args); return Promise.resolve(twoGpus); } });
    await metrics.sample();
    const exposition = await scrape(metrics);
    expect(calls[0]).toEqual(["--query-gpu=uuid,utilization.gpu,memory.total,memory.used", "--format=csv,noheader,nounits"]);
    const first = { gpu_uuid: "GPU-11111111-2222-3333-4444-555555555555" };
    const second = { gpu_uuid: "GPU-66666666-7777-8888-9999-000000000000" };
    for (const name of ["nv_gpu_utilization", "nv_gpu_memory_total_bytes", "nv_gpu_memory_used_bytes"]) expect(exposition.types.get(name)).toBe("gauge");
    expect(exposition.value("nv_gpu_utilization", first)).toBe(0.35);
    expect(exposition.value("nv_gpu_utilization", second)).toBe(1);
    expect(exposition.value("nv_gpu_memory_total_bytes", first)).toBe(15360 * 1024 * 1024);
    expect(exposition.value("nv_gpu_memory_used_bytes", first)).toBe(1024 * 1024 * 1024);
    // A field the GPU does not report is left out rather than exported as 0.
    expect(exposition.select("nv_gpu_memory_used_bytes", second)).toEqual([]);
  });

  it("export nothing named nv_gpu_ and stop asking when nvidia-smi is not installed", async () => {
    let calls = 0;
    const missing = Object.assign(new Error("spawn nvidia-smi ENOENT"), { code: "ENOENT" });
    const metrics = serverMetrics({ gpuMetrics: true, runNvidiaSmi: () => { calls += 1; return Promise.reject(missing); } });
    await metrics.sample();
    await metrics.sample();
    expect(await metrics.exposition()).not.toContain("nv_gpu_");
    expect(calls).toBe(1);
  });

  it("drop the GPU series while nvidia-smi fails, and bring them back when it recovers", async () => {
    let output: Promise<string> = Promise.resolve(twoGpus);
    const metrics = serverMetrics({ gpuMetrics: true, runNvidiaSmi: () => output });
    await metrics.sample();
    expect((await scrape(metrics)).select("nv_gpu_utilization")).toHaveLength(2);
    output = Promise.reject(new Error("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"));
    await metrics.sample();
    expect((await scrape(metrics)).select("nv_gpu_utilization")).toEqual([]);
    output = Promise.resolve(twoGpus);
    await metrics.sample();
    expect((await scrape(metrics)).select("nv_gpu_utilization")).toHaveLength(2);
  });

  it("never runs nvidia-smi with --allow-gpu-metrics false", async () => {
    let calls = 0;
    const metrics = serverMetrics({ gpuMetrics: false, runNvidiaSmi: () => { calls += 1; return Promise.resolve(twoGpus); } });
    await metrics.sample();
    expect(calls).toBe(0);
    expect(await metrics.exposition()).not.toContain("nv_gpu_");
  });
});

describe("process metrics", () => {
  it("export Node.js process metrics prefixed inference_server_ beside the model metrics", async () => {
    const exposition = await scrape(serverMetrics({ processMetrics: true }));
    expect(exposition.types.get("inference_server_process_cpu_seconds_total")).toBe("counter");
    expect(exposition.types.get("inference_server_nodejs_eventloop_lag_seconds")).toBe("gauge");
    expect([...exposition.types.keys()].filter((name) => name.startsWith("process_") || name.startsWith("nodejs_"))).toEqual([]);
  });
});

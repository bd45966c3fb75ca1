import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../helpers/server-process";
import { freePort } from "../server/metrics/free-port";
import { type Exposition, parseExposition } from "../server/metrics/prometheus-text";

const SIMPLE = { model: "simple", version: "1" };

function simpleRequest(rows: number, input1Elements = 16): string {
  const tensor = (name: string, elements: number): object =>
    ({ name, datatype: "INT32", shape: [rows, elements], data: Array.from({ length: rows * elements }, (_, i) => i) });
  return JSON.stringify({ inputs: [tensor("INPUT0", 16), tensor("INPUT1", input1Elements)] });
}

async function infer(server: RunningServer, body: string): Promise<number> {
  const response = await fetch(`${server.httpUrl}/v2/models/simple/infer`, { method: "POST", body, headers: { "content-type": "application/json" } });
  await response.arrayBuffer();
  return response.status;
}

async function scrape(server: RunningServer): Promise<Exposition> {
  const response = await fetch(`${server.metricsUrl}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(await response.text());
}

describe("metrics endpoint of the real server", () => {
  let server: RunningServer;

  beforeAll(async () => {
    server = await startServer({ services: ["http", "metrics"] });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("logs where it serves metrics, on its own port", () => {
    expect(server.logs()).toMatch(/"service":"metrics","port":\d+.*Started Metrics Service at 127\.0\.0\.1:\d+/);
    expect(server.metricsUrl).not.toBe(server.httpUrl);
  });

  it("counts successful and failed requests to simple as Triton does", async () => {
    const before = await scrape(server);
    expect(before.value("nv_inference_request_success", SIMPLE)).toBe(0);
    expect(before.value("nv_inference_request_failure", { ...SIMPLE, reason: "OTHER" })).toBe(0);

    // Sequential requests of 1, 2 and 3 rows: three executions of six batch elements in all.
    for (const rows of [1, 2, 3]) expect(await infer(server, simpleRequest(rows))).toBe(200);
    // INPUT1 of 15 elements where the model wants 16: refused by the core's validation.
    for (let i = 0; i < 2; i++) expect(await infer(server, simpleRequest(1, 15))).toBe(400);

    const after = await scrape(server);
    expect(after.value("nv_inference_request_success", SIMPLE)).toBe(3);
    expect(after.select("nv_inference_request_failure", SIMPLE).map((s) => [s.labels["reason"], s.value]))
      .toEqual([["REJECTED", 0], ["CANCELED", 0], ["BACKEND", 0], ["OTHER", 2]]);
    expect(after.value("nv_inference_count", SIMPLE)).toBe(6);
    expect(after.value("nv_inference_exec_count", SIMPLE)).toBe(3);
    expect(after.value("nv_inference_pending_request_count", SIMPLE)).toBe(0);
    expect(after.value("inference_queue_depth", SIMPLE)).toBe(0);
    expect(after.value("inference_instance_count", SIMPLE)).toBeGreaterThanOrEqual(1);
    expect(after.value("inference_instance_busy_seconds_total", SIMPLE)).toBeGreaterThan(0);
    expect(after.value("inference_request_duration_seconds_count", SIMPLE)).toBe(3);
    expect(after.value("inference_queue_duration_seconds_bucket", { ...SIMPLE, le: "+Inf" })).toBe(3);

    const requestUs = after.value("nv_inference_request_duration_us", SIMPLE);
    const phaseUs = ["queue", "compute_input", "compute_infer", "compute_output"].map((phase) => after.value(`nv_inference_${phase}_duration_us`, SIMPLE));
    expect(after.value("nv_inference_compute_infer_duration_us", SIMPLE)).toBeGreaterThan(0);
    // The phases happen inside the request, so together they cannot exceed it.
    expect(phaseUs.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(requestUs);
    expect(after.value("inference_request_duration_seconds_sum", SIMPLE)).toBeCloseTo(requestUs / 1e6, 5);
  });

  it("lists every loaded model, idle ones at zero, and the host's CPU and memory", async () => {
    const exposition = await scrape(server);
    expect(exposition.value("nv_inference_request_success", { model: "identity_fp32", version: "1" })).toBe(0);
    expect(exposition.value("nv_cpu_memory_total_bytes")).toBeGreaterThan(0);
    expect(exposition.value("nv_cpu_memory_used_bytes")).toBeGreaterThan(0);
    expect(exposition.value("nv_cpu_utilization")).toBeGreaterThanOrEqual(0);
    expect(exposition.value("nv_cpu_utilization")).toBeLessThanOrEqual(1);
    expect(exposition.types.get("inference_server_process_resident_memory_bytes")).toBe("gauge");
  });
});

describe("--allow-metrics false", () => {
  let server: RunningServer;
  let metricsPort: number;

  beforeAll(async () => {
    metricsPort = await freePort();
    server = await startServer({ services: ["http"], args: ["--allow-metrics", "false", "--metrics-port", String(metricsPort)] });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("opens no metrics port while the HTTP endpoint serves", async () => {
    expect((await fetch(`${server.httpUrl}/v2/health/ready`)).status).toBe(200);
    expect(await infer(server, simpleRequest(1))).toBe(200);
    await expect(fetch(`http://127.0.0.1:${metricsPort}/metrics`)).rejects.toThrow();
    expect(server.logs()).not.toContain('"service":"metrics"');
  });
});

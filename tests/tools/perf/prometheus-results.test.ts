import { afterEach, describe, expect, it } from "vitest";
import { summarizeMeasurement } from "../../../tools/perf/perf-measurement";
import { PrometheusResults } from "../../../tools/perf/prometheus-results";
import { EMPTY_SERVER_STATS } from "../../../tools/perf/server-side-stats";

const labels = { model: "resnet50", protocol: "http", mode: "concurrency" } as const;
const started: PrometheusResults[] = [];

async function start(lingerMs = 0): Promise<PrometheusResults> {
  const results = await PrometheusResults.start(labels, { port: 0, host: "127.0.0.1", lingerMs });
  started.push(results);
  return results;
}

/** One 2-second window of 100 requests taking 1..100 ms. */
function window() {
  const latenciesNs = Array.from({ length: 100 }, (_, i) => (i + 1) * 1e6);
  return summarizeMeasurement([{ startNs: 0, endNs: 2e9, latenciesNs, sendNsTotal: 0, receiveNsTotal: 0, delayedCount: 0, sentCount: 100 }], EMPTY_SERVER_STATS, 4);
}

async function scrape(results: PrometheusResults): Promise<Map<string, number>> {
  const response = await fetch(`http://127.0.0.1:${results.port}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/plain");
  const samples = new Map<string, number>();
  for (const line of (await response.text()).split("\n")) {
    const match = /^(\w+\{[^}]*\}|\w+) (\S+)$/.exec(line);
    if (match !== null) samples.set(match[1]!, Number(match[2]));
  }
  return samples;
}

afterEach(async () => {
  for (const results of started.splice(0)) await results.finish();
});

describe("PrometheusResults (inference-perf --prometheus-port)", () => {
  it("serves the last window's throughput, latency percentiles and the load level on /metrics over HTTP", async () => {
    const results = await start();
    results.loadLevelStarted(8);
    results.windowMeasured(window());
    const samples = await scrape(results);
    const series = (name: string, extra = "") => samples.get(`${name}{model="resnet50",protocol="http",mode="concurrency"${extra}}`);
    expect(series("inference_perf_throughput_infer_per_sec")).toBe(200); // 100 requests x batch 4 / 2 s
    expect(series("inference_perf_load_level")).toBe(8);
    expect(series("inference_perf_windows_total")).toBe(1);
    expect(series("inference_perf_latency_seconds", ',percentile="50"')).toBeCloseTo(0.051, 6);
    expect(series("inference_perf_latency_seconds", ',percentile="99"')).toBeCloseTo(0.099, 6);
    results.windowMeasured(window());
    expect((await scrape(results)).get('inference_perf_windows_total{model="resnet50",protocol="http",mode="concurrency"}')).toBe(2);
  });

  it("answers 404 for any other path", async () => {
    const results = await start();
    expect((await fetch(`http://127.0.0.1:${results.port}/`)).status).toBe(404);
  });

  it("after the run, keeps serving only until the final figures have been scraped once", async () => {
    const results = await start(30_000);
    results.windowMeasured(window());
    const finished = results.finish();
    const startedAt = Date.now();
    await scrape(results);
    await finished;
    expect(Date.now() - startedAt).toBeLessThan(5_000);
    await expect(fetch(`http://127.0.0.1:${results.port}/metrics`)).rejects.toThrow();
  });

  it("stops lingering after --prometheus-linger-ms when nothing scrapes", async () => {
    const results = await start(150);
    const startedAt = Date.now();
    await results.finish();
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(140);
    await expect(fetch(`http://127.0.0.1:${results.port}/metrics`)).rejects.toThrow();
  });

  it("fails to start with the system's reason when the port is taken", async () => {
    const results = await start();
    await expect(PrometheusResults.start(labels, { port: results.port, host: "127.0.0.1", lingerMs: 0 })).rejects.toThrow(/EADDRINUSE/);
  });
});

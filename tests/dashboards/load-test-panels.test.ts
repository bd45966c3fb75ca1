import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parsePerfOptions } from "../../tools/perf/perf-options";
import { PrometheusResults } from "../../tools/perf/prometheus-results";
import { runInferencePerf } from "../../tools/perf/run-inference-perf";
import { type RunningPrometheus, startPrometheus } from "../helpers/prometheus-process";
import { REPO_ROOT, type RunningServer, startServer } from "../helpers/server-process";
import { listDashboardQueries } from "./promql-inventory";
import { waitFor } from "../helpers/wait-for";

/**
 * The overview dashboard's load-test panels against the real parts: our server, inference-perf serving its
 * results (`--prometheus-port`) while it measures the server, and a real Prometheus scraping both, as the
 * in-cluster load test's PodMonitor and the server's ServiceMonitor do. Every query of those panels must
 * return data, and the fixture the end-to-end dashboard test serves must look like the real exporter.
 */

const DASHBOARDS_DIR = path.join(REPO_ROOT, "dashboards");
const FIXTURE = path.join(__dirname, "fixtures", "cluster-metrics.prom");
const LOAD_TEST_PANELS = /^Load test: /;
const REGION = "us-central1";

/** Metric name to the sorted label names of its series, from Prometheus text format. */
function labelNamesByMetric(text: string, prefix: string): Map<string, string> {
  const result = new Map<string, string>();
  for (const line of text.split("\n")) {
    const match = /^(\w+)\{([^}]*)\}/.exec(line);
    if (match === null || !match[1]!.startsWith(prefix)) continue;
    const names = [...match[2]!.matchAll(/(\w+)="/g)].map((label) => label[1]!).filter((name) => name !== "namespace" && name !== "pod");
    result.set(match[1]!, names.sort().join(","));
  }
  return result;
}

describe("the overview dashboard's load-test panels against Prometheus scraping a real inference-perf run", () => {
  let server: RunningServer | undefined;
  let results: PrometheusResults | undefined;
  let prometheus: RunningPrometheus | undefined;
  let exporterText = "";

  const query = async (expr: string): Promise<string[]> =>
    (await prometheus!.api<{ result: { value: [number, string] }[] }>("query", { query: expr })).result.map((sample) => sample.value[1]);

  beforeAll(async () => {
    server = await startServer({ services: ["http", "metrics"], args: ["--metrics-interval-ms", "500"] });
    results = await PrometheusResults.start({ model: "simple", protocol: "http", mode: "concurrency" }, { port: 0, host: "127.0.0.1", lingerMs: 0 });
    const target = (job: string, hostPort: string) => ({ job_name: job, static_configs: [{ targets: [hostPort], labels: { region: REGION } }] });
    prometheus = await startPrometheus({
      global: { scrape_interval: "1s", scrape_timeout: "1s" },
      scrape_configs: [target("inference-server", new URL(server.metricsUrl!).host), target("inference-load-test", `127.0.0.1:${results.port}`)],
    });

    // A short sweep over two concurrency levels: the panels must show it while it runs.
    const options = parsePerfOptions(["-m", "simple", "-u", new URL(server.httpUrl).host, "--concurrency-range", "1:2:1", "-p", "1000", "-r", "3"]);
    const sink = { write: () => true };
    await runInferencePerf(options, { stdout: sink, stderr: sink, observer: results });
    exporterText = await (await fetch(`http://127.0.0.1:${results.port}/metrics`)).text();
    await waitFor("the load test's figures in Prometheus", 20_000, async () =>
      ((await query('inference_perf_load_level{job="inference-load-test"} == 2')).length > 0 ? true : undefined));
  }, 120_000);

  afterAll(async () => {
    await prometheus?.stop();
    await results?.finish();
    await server?.stop();
  });

  it("returns data for every query of the load-test panels, client and server side", async () => {
    const queries = listDashboardQueries(DASHBOARDS_DIR).filter((q) => q.file === "inference-overview.json" && LOAD_TEST_PANELS.test(q.panel));
    expect(queries.map((q) => `${q.panel} ${q.refId}`)).toEqual([
      "Load test: client vs server throughput A", "Load test: client vs server throughput B",
      "Load test: client vs server p99 latency A", "Load test: client vs server p99 latency B",
    ]);
    for (const q of queries) {
      const values = await waitFor(`data for ${q.panel} ${q.refId}: ${q.expr}`, 10_000, async () => {
        const found = (await query(q.expr)).filter((value) => Number.isFinite(Number(value)));
        return found.length > 0 ? found : undefined;
      });
      // Idle models show 0 on the server side; the model under load must show its traffic.
      expect(values.some((value) => Number(value) > 0), `${q.panel} ${q.refId}`).toBe(true);
    }
  });

  it("serves the same metric names and labels as the fixture the end-to-end dashboard test uses", () => {
    expect(labelNamesByMetric(fs.readFileSync(FIXTURE, "utf8"), "inference_perf_")).toEqual(labelNamesByMetric(exporterText, "inference_perf_"));
  });
});

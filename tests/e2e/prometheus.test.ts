import fs from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listDashboardQueries, listRuleExpressions } from "../dashboards/promql-inventory";
import { promqlMetricNames } from "../dashboards/promql-metric-names";
import { type RunningPrometheus, startPrometheus } from "../helpers/prometheus-process";
import { REPO_ROOT, type RunningServer, SHARED_DATA, startServer } from "../helpers/server-process";
import { waitFor } from "../helpers/wait-for";

/**
 * The dashboards and rules against real parts: our server and a real Prometheus (Debian's package, as CI installs
 * it) on loopback, plus fake DCGM and kube-state-metrics exporters for the cluster-side series. After a few seconds
 * of load, every panel query and every rule is evaluated through Prometheus' HTTP API.
 */

const DASHBOARDS_DIR = path.join(REPO_ROOT, "dashboards");
const RULE_FILE = path.join(DASHBOARDS_DIR, "alerts.yaml");
const CLUSTER_FIXTURE = path.join(REPO_ROOT, "tests", "dashboards", "fixtures", "cluster-metrics.prom");
const TARGET_LABELS = { region: "us-central1", namespace: "serving", pod: "inference-server-0" };
const LOAD_MS = 5000;
const LOAD_CONCURRENCY = 4;
/** One request in FAILURE_EVERY fails validation: a 10% error ratio, twice the error-ratio alert's threshold. */
const FAILURE_EVERY = 10;
/** Alert states the load implies: it errors too often (pending until `for` elapses); nothing else is wrong. */
const EXPECTED_ALERT_STATES: Readonly<Record<string, "pending" | "inactive">> = { InferenceHighErrorRatio: "pending" };

interface PromSample {
  readonly metric: Readonly<Record<string, string>>;
  readonly value: readonly [number, string];
}
type QueryData = { resultType: "vector"; result: PromSample[] } | { resultType: "scalar"; result: [number, string] } | { resultType: "matrix" | "string"; result: unknown[] };
interface RuleStatus {
  readonly name: string;
  readonly type: "alerting" | "recording";
  readonly health: string;
  readonly lastError?: string;
  readonly state?: string;
}

/** The fixture's metric families whose names start with `prefix` (HELP/TYPE lines included). */
function familiesWithPrefix(text: string, prefix: string): string {
  return text.split("\n")
    .filter((line) => (line.startsWith("# HELP ") || line.startsWith("# TYPE ") ? line.split(" ")[2]!.startsWith(prefix) : line.startsWith(prefix)))
    .join("\n") + "\n";
}

/** Fake DCGM, kube-state-metrics, cAdvisor and load-test exporters on one loopback port, serving the dashboards' cluster fixture. */
async function startClusterExporters(): Promise<{ server: Server; port: number }> {
  const fixture = fs.readFileSync(CLUSTER_FIXTURE, "utf8");
  const bodies = new Map([
    ["/dcgm/metrics", familiesWithPrefix(fixture, "DCGM_")],
    ["/kube-state-metrics/metrics", familiesWithPrefix(fixture, "kube_")],
    ["/inference-perf/metrics", familiesWithPrefix(fixture, "inference_perf_")],
    ["/cadvisor/metrics", familiesWithPrefix(fixture, "container_")],
  ]);
  const server = createServer((request, response) => {
    const body = bodies.get(request.url ?? "");
    if (body === undefined) response.writeHead(404).end();
    else response.writeHead(200, { "content-type": "text/plain; version=0.0.4" }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

function prometheusConfig(serverMetricsTarget: string, exportersTarget: string): object {
  const clusterJob = (job: string, metricsPath: string): object => ({
    job_name: job, honor_labels: true, metrics_path: metricsPath,
    static_configs: [{ targets: [exportersTarget], labels: { region: TARGET_LABELS.region } }],
  });
  return {
    global: { scrape_interval: "1s", scrape_timeout: "1s", evaluation_interval: "1s" },
    rule_files: [RULE_FILE],
    scrape_configs: [
      { job_name: "inference-server", metrics_path: "/metrics", static_configs: [{ targets: [serverMetricsTarget], labels: TARGET_LABELS }] },
      clusterJob("dcgm-exporter", "/dcgm/metrics"),
      clusterJob("kube-state-metrics", "/kube-state-metrics/metrics"),
      clusterJob("inference-load-test", "/inference-perf/metrics"),
      clusterJob("kubelet-cadvisor", "/cadvisor/metrics"),
    ],
  };
}

const SIMPLE_ROW = Array.from({ length: 16 }, (_, i) => i);
const SUCCESSFUL_REQUEST = JSON.stringify({ inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: SIMPLE_ROW })) });
/** INPUT1 has 15 elements where simple wants 16: the core refuses it (failure reason OTHER). */
const FAILING_REQUEST = JSON.stringify({
  inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 16], data: SIMPLE_ROW }, { name: "INPUT1", datatype: "INT32", shape: [1, 15], data: SIMPLE_ROW.slice(1) }],
});

/** Requests to the ensemble image_classifier (3 steps), so that a panel counting each step as a request would show it. */
const ENSEMBLE_REQUESTS = 6;

/** ENSEMBLE_REQUESTS classifications of one photo through the ensemble, one after another. */
async function driveEnsemble(httpUrl: string): Promise<void> {
  const photo = fs.readFileSync(path.join(SHARED_DATA, "images", "mug.jpg"));
  const header = Buffer.from(JSON.stringify({ inputs: [{ name: "IMAGE", datatype: "BYTES", shape: [1, 1], parameters: { binary_data_size: photo.length + 4 } }] }));
  const length = Buffer.alloc(4);
  length.writeUInt32LE(photo.length);
  for (let sent = 0; sent < ENSEMBLE_REQUESTS; sent++) {
    const response = await fetch(`${httpUrl}/v2/models/image_classifier/infer`, {
      method: "POST", body: Buffer.concat([header, length, photo]),
      headers: { "content-type": "application/octet-stream", "inference-header-content-length": String(header.length) },
    });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`ensemble request answered ${response.status}`);
  }
}

/** Closed-loop load on `simple` for LOAD_MS: LOAD_CONCURRENCY clients, every FAILURE_EVERY-th request failing. */
async function driveLoad(httpUrl: string): Promise<void> {
  const until = Date.now() + LOAD_MS;
  let sent = 0;
  const client = async (): Promise<void> => {
    while (Date.now() < until) {
      const failing = ++sent % FAILURE_EVERY === 0;
      const response = await fetch(`${httpUrl}/v2/models/simple/infer`, { method: "POST", body: failing ? FAILING_REQUEST : SUCCESSFUL_REQUEST });
      await response.arrayBuffer();
      if (response.status !== (failing ? 400 : 200)) throw new Error(`load request answered ${response.status}`);
    }
  };
  await Promise.all(Array.from({ length: LOAD_CONCURRENCY }, client));
}

describe("dashboards and rules against a real Prometheus scraping the server", () => {
  let server: RunningServer | undefined;
  let exporters: Server | undefined;
  let prometheus: RunningPrometheus | undefined;

  const api = <T>(endpoint: string, params?: Record<string, string>): Promise<T> => prometheus!.api<T>(endpoint, params);
  const query = (expr: string): Promise<QueryData> => api<QueryData>("query", { query: expr });
  const samplesOf = (data: QueryData): string[] =>
    data.resultType === "vector" ? data.result.map((s) => s.value[1]) : data.resultType === "scalar" ? [data.result[1]] : [];
  const rules = async (): Promise<RuleStatus[]> =>
    (await api<{ groups: { rules: RuleStatus[] }[] }>("rules")).groups.flatMap((group) => group.rules);

  beforeAll(async () => {
    server = await startServer({ services: ["http", "metrics"], args: ["--metrics-interval-ms", "500"] });
    const cluster = await startClusterExporters();
    exporters = cluster.server;
    prometheus = await startPrometheus(prometheusConfig(new URL(server.metricsUrl!).host, `127.0.0.1:${cluster.port}`));
    await waitFor("every target to be scraped", 45_000, async () => {
      const { activeTargets } = await api<{ activeTargets: { health: string }[] }>("targets");
      return activeTargets.length === 5 && activeTargets.every((t) => t.health === "up") ? true : undefined;
    });

    await Promise.all([driveLoad(server.httpUrl), driveEnsemble(server.httpUrl)]);
    await waitFor("the load to show in Prometheus and the alert states it implies", 60_000, async () => {
      const rate = samplesOf(await query('sum(rate(nv_inference_request_success{model="simple"}[1m])) > 0'));
      const alerts = (await rules()).filter((rule) => rule.type === "alerting");
      return rate.length > 0 && alerts.every((rule) => rule.state === (EXPECTED_ALERT_STATES[rule.name] ?? "inactive")) ? true : undefined;
    }).catch(async (error: Error) => {
      throw new Error(`${error.message}\nrules: ${JSON.stringify(await rules().catch(() => []), null, 1)}`);
    });
  }, 180_000);

  afterAll(async () => {
    await prometheus?.stop();
    await server?.stop();
    await new Promise((resolve) => (exporters ? exporters.close(resolve) : resolve(undefined)));
  });

  it("has every metric that a panel or rule names in Prometheus (a metric the server does not export fails here)", async () => {
    const exported = new Set(await api<string[]>("label/__name__/values"));
    const named = [
      ...listDashboardQueries(DASHBOARDS_DIR).flatMap((q) => q.metrics.map((metric) => ({ metric, by: `${q.file} "${q.panel}" ${q.refId}` }))),
      ...listRuleExpressions(RULE_FILE).flatMap((rule) => promqlMetricNames(rule.expr).map((metric) => ({ metric, by: `rule ${rule.name}` }))),
    ];
    expect(named.filter(({ metric }) => !exported.has(metric)).map(({ metric, by }) => `${metric} (${by})`)).toEqual([]);
  });

  it("counts an ensemble request once in the client-request panels, and keeps models' latency quantiles apart", async () => {
    const queries = listDashboardQueries(DASHBOARDS_DIR);
    const panel = (title: string): string => queries.find((q) => q.panel === title)!.expr;
    // One evaluation time for every query, so the same rates are compared; and only once every target has a
    // sample after it, since a scrape already under way at that time would otherwise land between two queries.
    const at = String((await api<{ result: [number, string] }>("query", { query: "time()" })).result[0]);
    await waitFor("a scrape of every target after the evaluation time", 15_000, async () => {
      const data = await api<QueryData>("query", { query: "min(timestamp(up))" });
      return data.resultType === "vector" && Number(data.result[0]?.value[1]) > Number(at) ? true : undefined;
    });
    const value = async (expr: string): Promise<number[]> => {
      const data = await api<QueryData>("query", { query: expr, time: at });
      return data.resultType === "vector" ? data.result.map((sample) => Number(sample.value[1])) : [];
    };
    const rate = (selector: string): string => `sum(rate(nv_inference_request_success{${selector}}[1m]))`;
    const [clients] = await value(rate('model=~"simple|image_classifier"'));
    const [steps] = await value(rate('model=~"image_preprocess|squeezenet|image_postprocess"'));
    const [ensemble] = await value(rate('model="image_classifier"'));
    expect(ensemble).toBeGreaterThan(0);
    // Each ensemble request ran its three steps: what the old panels added on top of the clients' requests.
    expect(steps).toBeCloseTo(3 * ensemble!, 6);
    const [shown] = await value(panel("Successful client requests"));
    expect(shown).toBeCloseTo(clients!, 9);
    const [perGpu] = await value(panel("Requests per GPU"));
    expect(perGpu).toBeCloseTo(clients!, 9); // the fixture's one GPU

    // Per model, not one quantile over every model's buckets.
    const p99 = (await api<QueryData>("query", { query: panel("Request latency p50 / p95 / p99 by model").replace("histogram_quantile(0.5,", "histogram_quantile(0.99,"), time: at }));
    expect(p99.resultType === "vector" ? p99.result.map((sample) => sample.metric["model"]).sort() : []).toEqual(expect.arrayContaining(["image_classifier", "simple", "squeezenet"]));
    const slowest = await value(panel("Slowest model's p99 latency"));
    const [ensembleP99] = await value(`histogram_quantile(0.99, sum by (le) (rate(inference_request_duration_seconds_bucket{model="image_classifier"}[1m])))`);
    expect(slowest[0]).toBeCloseTo(ensembleP99!, 9);
  });

  it("returns data for every panel query of every dashboard", async () => {
    const queries = listDashboardQueries(DASHBOARDS_DIR);
    expect(queries.length).toBeGreaterThan(0);
    const empty: string[] = [];
    for (const q of queries) {
      const values = samplesOf(await query(q.expr));
      // Data means at least one real number: an all-NaN result (e.g. a quantile of no traffic) shows nothing either.
      if (!values.some((v) => Number.isFinite(Number(v)))) empty.push(`${q.file} "${q.panel}" ${q.refId}: ${q.expr} -> [${values.join(", ")}]`);
    }
    expect(empty).toEqual([]);
    console.info(`verified ${queries.length} panel queries of ${new Set(queries.map((q) => q.file)).size} dashboards against Prometheus`);
  });

  it("evaluates every recording rule to data and every alert to the state the load implies, all rules healthy", async () => {
    const expressions = listRuleExpressions(RULE_FILE);
    const loaded = await rules();
    expect(loaded.map((rule) => rule.name).sort()).toEqual(expressions.map((rule) => rule.name).sort());
    expect(loaded.filter((rule) => rule.health !== "ok").map((rule) => `${rule.name}: ${rule.health} ${rule.lastError ?? ""}`)).toEqual([]);

    const problems: string[] = [];
    for (const rule of expressions) {
      const values = samplesOf(await query(rule.expr));
      if (rule.kind === "record") {
        if (!values.some((v) => Number.isFinite(Number(v)))) problems.push(`record ${rule.name} has no data: [${values.join(", ")}]`);
        continue;
      }
      const expected = EXPECTED_ALERT_STATES[rule.name] ?? "inactive";
      const state = loaded.find((r) => r.name === rule.name)?.state;
      if (state !== expected) problems.push(`alert ${rule.name} is ${state}, expected ${expected}`);
      if ((values.length > 0) !== (expected !== "inactive")) problems.push(`alert ${rule.name}: expr returns ${values.length} series while the alert should be ${expected}`);
    }
    expect(problems).toEqual([]);
    const alerts = expressions.filter((rule) => rule.kind === "alert").length;
    console.info(`verified ${expressions.length} rules (${expressions.length - alerts} recording, ${alerts} alerting) against Prometheus`);
  });
});

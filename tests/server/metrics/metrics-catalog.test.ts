import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PROCESS_METRICS_PREFIX, ServerMetrics } from "../../../server/metrics/index";
import { loadMetricsCatalog } from "../../dashboards/metrics-catalog";
import { parseExposition } from "./prometheus-text";

const CATALOG = loadMetricsCatalog(path.resolve(__dirname, "../../../dashboards/metrics-catalog.json"));
const SERVER_ENTRIES = CATALOG.metrics.filter((metric) => metric.source === "inference-server");
const OBSERVABILITY_PAGE = path.resolve(__dirname, "../../../docs/observability.md");

/** docs/observability.md's metrics table: per metric name, the type and labels its row gives. */
function documentedMetrics(): Map<string, { type: string; labels: string[] }> {
  const rows = new Map<string, { type: string; labels: string[] }>();
  for (const line of fs.readFileSync(OBSERVABILITY_PAGE, "utf8").split("\n")) {
    const [names = "", type = "", labels = ""] = line.replace(/^\| /, "").split(" | ");
    if (!line.startsWith("| `") || !["counter", "gauge", "histogram"].includes(type)) continue;
    const labelNames = [...labels.matchAll(/`(\w+)`/g)].map((match) => match[1]!).sort();
    for (const [, name] of names.matchAll(/`(\w+)`/g)) rows.set(name!, { type, labels: labelNames });
  }
  return rows;
}

// Everything switched on, with a fake host and GPU, so that every family the server can export is present.
const metrics = new ServerMetrics({
  modelGauges: () => [{ modelName: "simple", modelVersion: "1", pendingRequests: 0, queueDepth: 0, instanceCount: 1, instanceBusySeconds: 0, instanceRestarts: 0, placements: [{ kind: "KIND_GPU", deviceId: 0, provider: "webgpu" }] }],
  ensembleSteps: () => [{ ensemble: "pipeline", model: "simple" }],
  cpuMetrics: true,
  gpuMetrics: true,
  intervalMs: 60_000,
  readProc: (file) => (file === "/proc/stat" ? "cpu  1 2 3 4 5 6 7 8 0 0\n" : "MemTotal: 100 kB\nMemAvailable: 40 kB\n"),
  runNvidiaSmi: () => Promise.resolve("GPU-00000000-1111-2222-3333-444444444444, 10, 16000, 1000\n"),
});
afterAll(() => metrics.close());

describe("the server's metrics against dashboards/metrics-catalog.json (what dashboards and alerts query)", () => {
  it("exports every catalog entry of the server with its type and exactly its labels", async () => {
    await metrics.sample();
    const exposition = parseExposition(await metrics.exposition());
    for (const entry of SERVER_ENTRIES) {
      expect(exposition.types.get(entry.name), entry.name).toBe(entry.type);
      const seriesName = entry.type === "histogram" ? `${entry.name}_bucket` : entry.name;
      const labelSets = exposition.select(seriesName).map((sample) => Object.keys(sample.labels).sort());
      const expected = [...entry.labels, ...(entry.type === "histogram" ? ["le"] : [])].sort();
      expect(labelSets.length, entry.name).toBeGreaterThan(0);
      for (const labels of labelSets) expect(labels, entry.name).toEqual(expected);
    }
  });

  it("exports no other family outside the Node.js process metrics, so the catalog stays complete", async () => {
    const exposition = parseExposition(await metrics.exposition());
    const uncatalogued = [...exposition.types.keys()].filter((name) => !name.startsWith(PROCESS_METRICS_PREFIX) && !SERVER_ENTRIES.some((entry) => entry.name === name));
    expect(uncatalogued).toEqual([]);
  });

  it("documents every catalog entry of the server, with its type and labels, in docs/observability.md's metrics table", () => {
    const documented = documentedMetrics();
    const wrong = SERVER_ENTRIES.filter((entry) => {
      const row = documented.get(entry.name);
      return row?.type !== entry.type || row.labels.join(",") !== [...entry.labels].sort().join(",");
    });
    expect(wrong.map((entry) => entry.name)).toEqual([]);
  });
});

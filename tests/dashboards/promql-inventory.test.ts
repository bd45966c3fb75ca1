import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadDashboards } from "./load-dashboards";
import { listDashboardQueries, listRuleExpressions } from "./promql-inventory";
import { promqlMetricNames } from "./promql-metric-names";

const DASHBOARDS_DIR = path.resolve(__dirname, "../../dashboards");

let scratchDir = "";
beforeAll(() => {
  scratchDir = fs.mkdtempSync(path.join(os.tmpdir(), "promql-inventory-test-"));
});
afterAll(() => {
  fs.rmSync(scratchDir, { recursive: true, force: true });
});

/** A folder holding one minimal dashboard whose single panel runs `expr`. */
function dashboardDirWithQuery(name: string, expr: string): string {
  const dir = path.join(scratchDir, name);
  fs.mkdirSync(dir);
  const dashboard = {
    uid: name,
    title: name,
    tags: ["test"],
    time: { from: "now-1h", to: "now" },
    refresh: "30s",
    schemaVersion: 39,
    templating: { list: [{ name: "model", type: "query" }, { name: "pod", type: "query" }] },
    panels: [{ id: 1, type: "timeseries", title: "Panel", gridPos: { h: 8, w: 12, x: 0, y: 0 }, targets: [{ refId: "A", expr }] }],
  };
  fs.writeFileSync(path.join(dir, `${name}.json`), JSON.stringify(dashboard));
  return dir;
}

describe("promqlMetricNames", () => {
  it.each([
    ["a bare selector", "up", ["up"]],
    ["label names inside matchers and grouping clauses", 'sum by (pod, model) (rate(nv_inference_count{model=~"a|b", le!="0.5"}[5m]))', ["nv_inference_count"]],
    ["numbers with exponents, durations and offsets", "rate(nv_inference_queue_duration_us[1m] offset 5m) / 1e6 > 1.5e-3", ["nv_inference_queue_duration_us"]],
    ["both sides of a binary operation with on/group_left", "a_total / on (pod) group_left (node) b_info", ["a_total", "b_info"]],
    ["recorded names with colons and string arguments", 'label_replace(model:x:rate5m, "dst", "$1", "src", "(.*)")', ["model:x:rate5m"]],
    ["keywords, aggregations and functions", "histogram_quantile(0.99, sum without (le) (x_bucket)) and bool vector(1) or absent(y)", ["x_bucket", "y"]],
  ])("finds metric names in %s", (_case, expr, names) => {
    expect(promqlMetricNames(expr)).toEqual(names);
  });
});

describe("listDashboardQueries", () => {
  const queries = listDashboardQueries(DASHBOARDS_DIR);

  it("lists every target of every panel of every dashboard", () => {
    const targetCount = loadDashboards(DASHBOARDS_DIR)
      .flatMap(({ dashboard }) => dashboard.panels)
      .reduce((sum, panel) => sum + panel.targets.length, 0);
    expect(queries).toHaveLength(targetCount);
    expect(new Set(queries.map((query) => query.file))).toEqual(new Set(["inference-overview.json", "gpu-capacity.json", "model-drilldown.json"]));
  });

  it("leaves no Grafana variable in any expression and names the metrics each selects", () => {
    expect(queries.filter((query) => /\$|\[\[/.test(query.expr))).toEqual([]);
    expect(queries.filter((query) => query.metrics.length === 0)).toEqual([]);
    expect(queries).toContainEqual(
      expect.objectContaining({
        file: "inference-overview.json",
        panel: "Request rate by model",
        refId: "A",
        expr: 'sum by (model) (rate(nv_inference_request_success{region=~".*", pod=~".*", model=~".*"}[1m]))',
        metrics: ["nv_inference_request_success"],
      }),
    );
  });

  it("substitutes every variable syntax Grafana accepts", () => {
    const dir = dashboardDirWithQuery("syntaxes", 'rate(x{model=~"${model:regex}", pod=~"[[pod]]"}[$__interval])');
    expect(listDashboardQueries(dir).map((query) => query.expr)).toEqual(['rate(x{model=~".*", pod=~".*"}[1m])']);
  });

  it("refuses a query whose variable it cannot substitute", () => {
    const dir = dashboardDirWithQuery("unknown-variable", 'rate(x{zone=~"$zone"}[5m])');
    expect(() => listDashboardQueries(dir)).toThrow(/no evaluation value for Grafana variable \$zone/);
  });
});

describe("listRuleExpressions", () => {
  it("lists every alert and recording rule with its group, name and expression", () => {
    const rules = listRuleExpressions(path.join(DASHBOARDS_DIR, "alerts.yaml"));
    expect(rules.filter((rule) => rule.kind === "record")).toHaveLength(4);
    expect(rules.filter((rule) => rule.kind === "alert")).toHaveLength(7);
    expect(rules).toContainEqual({
      group: "inference-server.alerts",
      name: "InferenceServerDown",
      kind: "alert",
      expr: 'up{job="inference-server"} == 0',
    });
  });
});

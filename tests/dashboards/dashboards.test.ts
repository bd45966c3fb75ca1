import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { dump } from "js-yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dashboardProblems } from "./dashboard-problems";
import { loadDashboards, parseDashboard, variableQueryText, type GrafanaDashboard } from "./load-dashboards";
import { loadMetricsCatalog } from "./metrics-catalog";
import { listDashboardQueries } from "./promql-inventory";
import { runPromtool } from "./promtool";
import { unknownMetricNames } from "./unknown-metric-names";

const DASHBOARDS_DIR = path.resolve(__dirname, "../../dashboards");
const CLUSTER_METRICS_FIXTURE = path.join(__dirname, "fixtures", "cluster-metrics.prom");
const EXPECTED_DASHBOARD_FILES = ["gpu-capacity.json", "inference-overview.json", "model-drilldown.json"];
const catalog = loadMetricsCatalog(path.join(DASHBOARDS_DIR, "metrics-catalog.json"));
const dashboards = loadDashboards(DASHBOARDS_DIR);

let scratchDir = "";
beforeAll(() => {
  scratchDir = fs.mkdtempSync(path.join(os.tmpdir(), "dashboards-test-"));
});
afterAll(() => {
  fs.rmSync(scratchDir, { recursive: true, force: true });
});

function dashboardFile(file: string): GrafanaDashboard {
  const found = dashboards.find((loaded) => loaded.file === file);
  if (!found) throw new Error(`no dashboard ${file}`);
  return found.dashboard;
}

/** A deep copy of the overview dashboard, changed by `edit`, to show a check rejects the change. */
function brokenOverview(edit: (dashboard: GrafanaDashboard) => void): GrafanaDashboard {
  const copy = parseDashboard(JSON.parse(JSON.stringify(dashboardFile("inference-overview.json"))));
  edit(copy);
  return copy;
}

function firstPanel(dashboard: GrafanaDashboard): GrafanaDashboard["panels"][number] {
  const panel = dashboard.panels[0];
  if (!panel) throw new Error("dashboard has no panel");
  return panel;
}

/** `promtool check rules` over the expressions, each wrapped in a recording rule: PromQL syntax check. */
function checkPromqlSyntax(exprs: readonly string[]): ReturnType<typeof runPromtool> {
  const file = path.join(scratchDir, `queries-${exprs.length}.yaml`);
  const rules = exprs.map((expr, index) => ({ record: `dashboard:query_${index}:check`, expr }));
  fs.writeFileSync(file, dump({ groups: [{ name: "dashboard-queries", rules }] }));
  return runPromtool(["check", "rules", file]);
}

describe("Grafana dashboards", () => {
  it("ships the overview, GPU and capacity, and model drill-down dashboards with distinct uids and titles", () => {
    expect(dashboards.map((loaded) => loaded.file)).toEqual(EXPECTED_DASHBOARD_FILES);
    expect(new Set(dashboards.map(({ dashboard }) => dashboard.uid)).size).toBe(dashboards.length);
    expect(new Set(dashboards.map(({ dashboard }) => dashboard.title)).size).toBe(dashboards.length);
  });

  it.each(EXPECTED_DASHBOARD_FILES)("%s follows the dashboard rules", (file) => {
    expect(dashboardProblems(dashboardFile(file))).toEqual([]);
  });

  it("reports a panel without unit or description, a reused panel id and a foreign datasource", () => {
    const broken = brokenOverview((dashboard) => {
      const [first, second] = dashboard.panels;
      if (!first || !second) throw new Error("overview needs two panels");
      first.fieldConfig = { defaults: {} };
      delete first.description;
      second.id = first.id;
      second.datasource = { type: "prometheus", uid: "my-prometheus" };
    });
    const [first, second] = broken.panels;
    expect(dashboardProblems(broken)).toEqual(
      expect.arrayContaining([
        `panel ${first?.id} "${first?.title}": missing description`,
        `panel ${first?.id} "${first?.title}": missing fieldConfig.defaults.unit`,
        `panel ${second?.id} "${second?.title}": datasource must be {"type":"prometheus","uid":"\${datasource}"}`,
        `panel id ${first?.id} is used twice`,
      ]),
    );
  });

  it("reports a missing required variable, an unknown variable and a variable used with = instead of =~", () => {
    const broken = brokenOverview((dashboard) => {
      dashboard.templating.list = dashboard.templating.list.filter((variable) => variable.name !== "region");
      const target = firstPanel(dashboard).targets[0];
      if (!target) throw new Error("panel has no target");
      target.expr = 'sum(rate(nv_inference_request_success{model="$model", zone=~"$zone"}[$__rate_interval]))';
    });
    const panel = firstPanel(broken);
    const where = `panel ${panel.id} "${panel.title}" query A`;
    expect(dashboardProblems(broken)).toEqual(
      expect.arrayContaining([
        'needs a query variable "region"',
        `${where}: $model must be used as a regex matcher (label=~"$model")`,
        `${where}: unknown variable $zone`,
      ]),
    );
  });

  it("reports panels that overlap on the grid", () => {
    const broken = brokenOverview((dashboard) => {
      const [first, second] = dashboard.panels;
      if (!first || !second) throw new Error("overview needs two panels");
      second.gridPos = { ...first.gridPos };
    });
    const [first, second] = broken.panels;
    expect(dashboardProblems(broken)).toContain(`panels ${first?.id} and ${second?.id} overlap`);
  });

  it("queries only metrics listed in dashboards/metrics-catalog.json, in panels and in variables", () => {
    const panelExprs = listDashboardQueries(DASHBOARDS_DIR).map((query) => query.expr);
    const variableSelectors = dashboards.flatMap(({ dashboard }) =>
      dashboard.templating.list
        .filter((variable) => variable.type === "query")
        .map((variable) => /^label_values\((.+),\s*\w+\s*\)$/.exec(variableQueryText(variable))?.[1] ?? ""),
    );
    expect(variableSelectors.every((selector) => selector !== "")).toBe(true);
    expect(unknownMetricNames([...panelExprs, ...variableSelectors], catalog)).toEqual([]);
  });

  it("flags a query on a metric the server does not export", () => {
    const exprs = ["sum(rate(nv_inference_request_success[1m])) / sum(rate(nv_inference_requests_total[1m]))"];
    expect(unknownMetricNames(exprs, catalog)).toEqual(["nv_inference_requests_total"]);
  });

  it("has a fixture with a series for every metric panels need from DCGM, kube-state-metrics and the load test", () => {
    const fixtureNames = new Set(
      fs
        .readFileSync(CLUSTER_METRICS_FIXTURE, "utf8")
        .split("\n")
        .filter((line) => line.trim() !== "" && !line.startsWith("#"))
        .map((line) => /^[A-Za-z_:][\w:]*/.exec(line)?.[0]),
    );
    const needed = new Set(
      listDashboardQueries(DASHBOARDS_DIR)
        .flatMap((query) => query.metrics)
        .filter((name) => {
          const source = catalog.metricOfSeries(name)?.source;
          return source === "dcgm-exporter" || source === "kube-state-metrics" || source === "inference-perf";
        }),
    );
    expect(needed.size).toBeGreaterThan(0);
    expect([...needed].filter((name) => !fixtureNames.has(name))).toEqual([]);
  });

  it("has panel queries that are all valid PromQL (promtool parses them)", () => {
    const result = checkPromqlSyntax(listDashboardQueries(DASHBOARDS_DIR).map((query) => query.expr));
    expect(result.output).toContain("SUCCESS");
    expect(result.exitCode).toBe(0);
  });

  it("would reject a panel query with a PromQL syntax error", () => {
    const result = checkPromqlSyntax(["sum by (model) (rate(nv_inference_request_success[1m])"]);
    expect(result.exitCode).not.toBe(0);
    expect(result.output).toMatch(/parse error/i);
  });

  it("documents every catalog metric in the README's metrics table", () => {
    const readme = fs.readFileSync(path.join(DASHBOARDS_DIR, "README.md"), "utf8");
    const undocumented = catalog.metrics.filter((metric) => !readme.includes(`| \`${metric.name}\` |`));
    expect(undocumented.map((metric) => metric.name)).toEqual([]);
  });
});

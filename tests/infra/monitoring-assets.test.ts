import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readMonitoringAssets } from "../../infra/monitoring-assets";
import { FIXTURE_DASHBOARDS_DIR } from "./helpers/fixture-stack";

const RECORDING_RULE = "groups:\n  - name: g\n    rules:\n      - record: inference_server:queue_duration_us_per_request:rate1m\n        expr: vector(0)\n";

const DASHBOARD = '{"title": "t", "panels": []}';
const tempDirs: string[] = [];
function dashboardsDir(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "infra-dashboards-"));
  tempDirs.push(dir);
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
  return dir;
}

afterEach(() => {
  for (const dir of tempDirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe("readMonitoringAssets", () => {
  it("turns every dashboard file into a ConfigMap-named entry and reads the rule groups", () => {
    const assets = readMonitoringAssets(FIXTURE_DASHBOARDS_DIR);
    expect(assets.dashboards.map(({ fileName, configMapName }) => [fileName, configMapName])).toEqual([
      ["Inference Overview.json", "dashboard-inference-overview"],
      ["gpu.json", "dashboard-gpu"],
    ]);
    expect(assets.dashboards[1]?.json).toBe(fs.readFileSync(path.join(FIXTURE_DASHBOARDS_DIR, "gpu.json"), "utf8"));
    expect(assets.rules.groups).toHaveLength(1);
  });

  it("picks up a dashboard added to the folder without code changes", () => {
    const dir = dashboardsDir({ "alerts.yaml": RECORDING_RULE, "a.json": DASHBOARD, "b.json": DASHBOARD, "notes.md": "not a dashboard" });
    expect(readMonitoringAssets(dir).dashboards.map((dashboard) => dashboard.fileName)).toEqual(["a.json", "b.json"]);
  });

  it("accepts the repository's own dashboards folder", () => {
    const repositoryDashboards = path.resolve(__dirname, "..", "..", "dashboards");
    const assets = readMonitoringAssets(repositoryDashboards);
    expect(assets.dashboards.map((dashboard) => dashboard.fileName)).toEqual(["gpu-capacity.json", "inference-overview.json", "model-drilldown.json"]);
  });

  it("provisions Grafana dashboards only: other JSON, such as the metrics catalog, is not a dashboard (issue 23, item 17)", () => {
    const dir = dashboardsDir({ "alerts.yaml": RECORDING_RULE, "a.json": DASHBOARD, "metrics-catalog.json": '{"description": "d", "metrics": []}' });
    expect(readMonitoringAssets(dir).dashboards.map((dashboard) => dashboard.fileName)).toEqual(["a.json"]);
  });

  it("refuses a folder without the rule file the HPA depends on", () => {
    expect(() => readMonitoringAssets(dashboardsDir({ "a.json": "{}" }))).toThrow(/alerts\.yaml is missing: the HPA's queue-time metric comes from its recording rule inference_server:queue_duration_us_per_request:rate1m/);
  });

  it("refuses rules that do not record the HPA's queue-time metric", () => {
    const dir = dashboardsDir({ "alerts.yaml": "groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: vector(1)\n" });
    expect(() => readMonitoringAssets(dir)).toThrow(/does not define the recording rule inference_server:queue_duration_us_per_request:rate1m/);
  });

  it("refuses a rule file without groups", () => {
    expect(() => readMonitoringAssets(dashboardsDir({ "alerts.yaml": "rules: []\n" }))).toThrow(/needs a top-level 'groups:' list/);
  });

  it("names a dashboard that is not JSON", () => {
    expect(() => readMonitoringAssets(dashboardsDir({ "alerts.yaml": RECORDING_RULE, "broken.json": "{" }))).toThrow(/broken\.json is not valid JSON/);
  });

  it("refuses two files that would share a ConfigMap", () => {
    expect(() => readMonitoringAssets(dashboardsDir({ "alerts.yaml": RECORDING_RULE, "GPU.json": DASHBOARD, "gpu.json": DASHBOARD }))).toThrow(/map to the ConfigMap name dashboard-gpu/);
  });

  it("refuses a missing folder", () => {
    expect(() => readMonitoringAssets(path.join(os.tmpdir(), "no-such-dashboards-folder"))).toThrow(/does not exist/);
  });
});

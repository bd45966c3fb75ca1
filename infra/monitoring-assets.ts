import fs from "node:fs";
import path from "node:path";
import { load as loadYaml } from "js-yaml";
import { autoscalingMetrics } from "./autoscaling-metrics";

/** One Grafana dashboard file, ready to become a ConfigMap for Grafana's dashboard sidecar. */
export interface DashboardFile {
  readonly fileName: string;
  /** DNS-1123 name derived from the file name, unique per file. */
  readonly configMapName: string;
  /** The file's text, verified to be JSON. */
  readonly json: string;
}

/** A Prometheus rule file (`groups: [...]`), the spec of a PrometheusRule. */
export interface PrometheusRuleGroups {
  readonly groups: readonly Record<string, unknown>[];
}

/** The monitoring content every cluster gets: dashboards and the alert/recording rules. */
export interface MonitoringAssets {
  readonly dashboards: readonly DashboardFile[];
  readonly rules: PrometheusRuleGroups;
}

/** The rule file the program turns into a PrometheusRule; it must define the HPA's queue-time recording rule. */
const ALERT_RULES_FILE = "alerts.yaml";

function configMapNameFor(fileName: string): string {
  const slug = path.basename(fileName, ".json").toLowerCase().replace(/[^a-z0-9-]+/g, "-").replace(/^-+|-+$/g, "");
  return `dashboard-${slug}`.slice(0, 63).replace(/-+$/, "");
}

function readDashboard(dir: string, fileName: string): DashboardFile {
  const json = fs.readFileSync(path.join(dir, fileName), "utf8");
  try {
    JSON.parse(json);
  } catch (error) {
    throw new Error(`dashboard ${path.join(dir, fileName)} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  return { fileName, configMapName: configMapNameFor(fileName), json };
}

/** Whether a parsed JSON file is a Grafana dashboard model (it has a `panels` list). */
export function isGrafanaDashboard(json: unknown): boolean {
  return typeof json === "object" && json !== null && Array.isArray((json as { panels?: unknown }).panels);
}

function definesRecord(groups: readonly Record<string, unknown>[], record: string): boolean {
  return groups.some((group) => Array.isArray(group["rules"]) && group["rules"].some((rule: unknown) =>
    typeof rule === "object" && rule !== null && (rule as Record<string, unknown>)["record"] === record));
}

function readRules(dir: string): PrometheusRuleGroups {
  const file = path.join(dir, ALERT_RULES_FILE);
  if (!fs.existsSync(file)) {
    throw new Error(`${file} is missing: the HPA's queue-time metric comes from its recording rule ${autoscalingMetrics.queueDuration.prometheusSeries}`);
  }
  const parsed: unknown = loadYaml(fs.readFileSync(file, "utf8"));
  const groups = (parsed as { groups?: unknown } | null)?.groups;
  if (!Array.isArray(groups) || !groups.every((group) => typeof group === "object" && group !== null)) {
    throw new Error(`${file} is not a Prometheus rule file: it needs a top-level 'groups:' list`);
  }
  const ruleGroups = groups as Record<string, unknown>[];
  if (!definesRecord(ruleGroups, autoscalingMetrics.queueDuration.prometheusSeries)) {
    throw new Error(`${file} does not define the recording rule ${autoscalingMetrics.queueDuration.prometheusSeries} that the HPA scales on`);
  }
  return { groups: ruleGroups };
}

/**
 * Reads every `*.json` Grafana dashboard (other JSON files are skipped) and the rule file in `dir` (the repository's dashboards/ folder), at the
 * time the program runs, so new dashboards deploy without code changes.
 *
 * @throws Error when the folder or the rule file is missing, a dashboard is not JSON, two files map to
 *   the same ConfigMap name, or the rules lack the HPA's recording rule.
 */
export function readMonitoringAssets(dir: string): MonitoringAssets {
  if (!fs.existsSync(dir)) throw new Error(`dashboards folder ${dir} does not exist`);
  // Only Grafana dashboards (a `panels` list) become ConfigMaps; other JSON there (the metrics catalog the
  // dashboard tests read) is not a dashboard and would show in Grafana as a broken one.
  const dashboards = fs.readdirSync(dir).filter((name) => name.endsWith(".json")).sort().map((name) => readDashboard(dir, name))
    .filter((dashboard) => isGrafanaDashboard(JSON.parse(dashboard.json)));
  const names = new Set<string>();
  for (const dashboard of dashboards) {
    if (names.has(dashboard.configMapName)) throw new Error(`two dashboards in ${dir} map to the ConfigMap name ${dashboard.configMapName}; rename one`);
    names.add(dashboard.configMapName);
  }
  return { dashboards, rules: readRules(dir) };
}

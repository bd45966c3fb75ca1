import { grafanaVariableReferences } from "./grafana-variable-references";
import { variableQueryText, type GrafanaDashboard, type GrafanaPanel } from "./load-dashboards";

// Every dashboard offers these, so operators filter the same way everywhere.
const REQUIRED_QUERY_VARIABLES = ["region", "model", "pod"] as const;
/** Grafana's built-in variables that panel queries may use. */
export const GRAFANA_BUILTIN_VARIABLES = ["__rate_interval", "__interval"] as const;

const MIN_SCHEMA_VERSION = 39;
const MAX_UID_LENGTH = 40;
const GRID_COLUMNS = 24;
const PANEL_TYPES = new Set(["timeseries", "stat", "gauge"]);
const DATASOURCE_VARIABLE = "datasource";
const DATASOURCE_REF = { type: "prometheus", uid: "${datasource}" };
// A query variable may be multi-valued or "All", which Grafana expands to a regex: only =~ matches it.
const INSIDE_REGEX_MATCHER = /=~\s*"[^"]*$/;

function sameDatasource(ref: { type: string; uid: string } | string | null | undefined): boolean {
  return typeof ref === "object" && ref !== null && ref.type === DATASOURCE_REF.type && ref.uid === DATASOURCE_REF.uid;
}

function overlaps(a: GrafanaPanel["gridPos"], b: GrafanaPanel["gridPos"]): boolean {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

function variableProblems(dashboard: GrafanaDashboard): string[] {
  const problems: string[] = [];
  const variables = dashboard.templating.list;
  const datasource = variables.find((variable) => variable.name === DATASOURCE_VARIABLE);
  if (datasource?.type !== "datasource" || datasource.query !== "prometheus") {
    problems.push(`needs a variable "${DATASOURCE_VARIABLE}" of type datasource with query "prometheus"`);
  }
  for (const name of REQUIRED_QUERY_VARIABLES) {
    if (!variables.some((variable) => variable.name === name)) problems.push(`needs a query variable "${name}"`);
  }
  for (const variable of variables.filter((candidate) => candidate.type === "query")) {
    const where = `variable "${variable.name}"`;
    if (!sameDatasource(variable.datasource)) problems.push(`${where}: datasource must be ${JSON.stringify(DATASOURCE_REF)}`);
    if (!/^label_values\(.+,\s*\w+\s*\)$/.test(variableQueryText(variable))) {
      problems.push(`${where}: query must be label_values(<selector>, <label>)`);
    }
    // "All" must match series that lack the label too (e.g. no region label on a single cluster).
    if (variable.includeAll === true && variable.allValue !== ".*") problems.push(`${where}: includeAll needs allValue ".*"`);
  }
  return problems;
}

function panelProblems(panel: GrafanaPanel): string[] {
  const where = `panel ${panel.id} "${panel.title}"`;
  const problems: string[] = [];
  if (!PANEL_TYPES.has(panel.type)) problems.push(`${where}: type ${panel.type} is not one of ${[...PANEL_TYPES].join(", ")}`);
  if (panel.title.trim() === "") problems.push(`${where}: missing title`);
  if (!panel.description?.trim()) problems.push(`${where}: missing description`);
  if (!panel.fieldConfig?.defaults.unit?.trim()) problems.push(`${where}: missing fieldConfig.defaults.unit`);
  if (!sameDatasource(panel.datasource)) problems.push(`${where}: datasource must be ${JSON.stringify(DATASOURCE_REF)}`);
  const { x, y, w, h } = panel.gridPos;
  if (x < 0 || y < 0 || w <= 0 || h <= 0 || x + w > GRID_COLUMNS) problems.push(`${where}: gridPos outside the ${GRID_COLUMNS}-column grid`);
  if (panel.targets.length === 0) problems.push(`${where}: has no query`);
  const refIds = new Set<string>();
  for (const target of panel.targets) {
    if (refIds.has(target.refId)) problems.push(`${where}: refId ${target.refId} used twice`);
    refIds.add(target.refId);
    if (target.expr.trim() === "") problems.push(`${where}: query ${target.refId} is empty`);
    if (target.datasource && !sameDatasource(target.datasource)) problems.push(`${where}: query ${target.refId} has another datasource`);
  }
  return problems;
}

function referenceProblems(dashboard: GrafanaDashboard): string[] {
  const problems: string[] = [];
  const queryVariables = new Set(dashboard.templating.list.filter((v) => v.type === "query").map((v) => v.name));
  const known = new Set<string>([...queryVariables, ...GRAFANA_BUILTIN_VARIABLES]);
  const used = new Set<string>();
  const texts = [
    ...dashboard.panels.flatMap((panel) => panel.targets.map((target) => ({ where: `panel ${panel.id} "${panel.title}" query ${target.refId}`, text: target.expr }))),
    ...dashboard.templating.list.map((variable) => ({ where: `variable "${variable.name}"`, text: variableQueryText(variable) })),
  ];
  for (const { where, text } of texts) {
    for (const reference of grafanaVariableReferences(text)) {
      used.add(reference.name);
      if (!known.has(reference.name)) problems.push(`${where}: unknown variable ${reference.text}`);
      else if (queryVariables.has(reference.name) && !INSIDE_REGEX_MATCHER.test(text.slice(0, reference.index))) {
        problems.push(`${where}: ${reference.text} must be used as a regex matcher (label=~"${reference.text}")`);
      }
    }
  }
  for (const name of queryVariables) {
    if (!used.has(name)) problems.push(`variable "${name}" is not used by any query`);
  }
  return problems;
}

function layoutProblems(panels: readonly GrafanaPanel[]): string[] {
  const problems: string[] = [];
  const ids = new Set<number>();
  panels.forEach((panel, index) => {
    if (ids.has(panel.id)) problems.push(`panel id ${panel.id} is used twice`);
    ids.add(panel.id);
    for (const other of panels.slice(index + 1)) {
      if (overlaps(panel.gridPos, other.gridPos)) problems.push(`panels ${panel.id} and ${other.id} overlap`);
    }
  });
  return problems;
}

/**
 * Every way a dashboard breaks the project's dashboard rules (current schema, a Prometheus datasource
 * variable used by every panel, region/model/pod variables used as regex matchers, and a title,
 * description and unit on every panel), as readable messages; empty when it follows them all.
 */
export function dashboardProblems(dashboard: GrafanaDashboard): string[] {
  const problems: string[] = [];
  if (dashboard.schemaVersion < MIN_SCHEMA_VERSION) problems.push(`schemaVersion ${dashboard.schemaVersion} is below ${MIN_SCHEMA_VERSION}`);
  if (dashboard.uid === "" || dashboard.uid.length > MAX_UID_LENGTH) problems.push(`uid must have 1 to ${MAX_UID_LENGTH} characters`);
  if (dashboard.title.trim() === "") problems.push("missing title");
  if (dashboard.tags.length === 0) problems.push("needs at least one tag");
  if (dashboard.refresh === "") problems.push("needs a refresh interval");
  return [
    ...problems,
    ...variableProblems(dashboard),
    ...dashboard.panels.flatMap(panelProblems),
    ...layoutProblems(dashboard.panels),
    ...referenceProblems(dashboard),
  ];
}

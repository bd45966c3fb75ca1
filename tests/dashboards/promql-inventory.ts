import { type GRAFANA_BUILTIN_VARIABLES } from "./dashboard-problems";
import { grafanaVariableReferences } from "./grafana-variable-references";
import { loadDashboards } from "./load-dashboards";
import { loadRuleFile } from "./load-rule-file";
import { promqlMetricNames } from "./promql-metric-names";

/** One panel query, ready to send to Prometheus' `/api/v1/query`. */
export interface DashboardQuery {
  /** Dashboard file name relative to the dashboards folder, e.g. `inference-overview.json`. */
  readonly file: string;
  /** The panel's title. */
  readonly panel: string;
  /** The target's refId within the panel (A, B, ...). */
  readonly refId: string;
  /** The PromQL with every Grafana variable replaced (see {@link EVALUATION_VALUES}). */
  readonly expr: string;
  /** The series names it selects; look them up in `dashboards/metrics-catalog.json` to know their source. */
  readonly metrics: readonly string[];
}

/** One alerting or recording rule of a rule file. */
export interface RuleExpression {
  readonly group: string;
  /** The alert name or the recorded series name. */
  readonly name: string;
  readonly kind: "alert" | "record";
  readonly expr: string;
}

/**
 * What Grafana variables become outside Grafana: a query variable ("All" of region/model/pod) matches
 * everything, including series without the label; rate windows are one minute.
 */
export const EVALUATION_VALUES = {
  queryVariable: ".*",
  builtins: { __rate_interval: "1m", __interval: "1m" } satisfies Record<(typeof GRAFANA_BUILTIN_VARIABLES)[number], string>,
} as const;

function substituteVariables(expr: string, queryVariables: ReadonlySet<string>, where: string): string {
  const builtins: Readonly<Record<string, string>> = EVALUATION_VALUES.builtins;
  let result = "";
  let copiedUpTo = 0;
  for (const reference of grafanaVariableReferences(expr)) {
    const value = queryVariables.has(reference.name) ? EVALUATION_VALUES.queryVariable : builtins[reference.name];
    if (value === undefined) throw new Error(`${where}: no evaluation value for Grafana variable ${reference.text}`);
    result += expr.slice(copiedUpTo, reference.index) + value;
    copiedUpTo = reference.index + reference.text.length;
  }
  return result + expr.slice(copiedUpTo);
}

/**
 * Every PromQL expression of every panel target of every dashboard in `dir`, with Grafana variables
 * substituted so Prometheus can evaluate it. Throws when a query uses a variable with no evaluation value.
 */
export function listDashboardQueries(dir: string): DashboardQuery[] {
  return loadDashboards(dir).flatMap(({ file, dashboard }) => {
    const queryVariables = new Set(dashboard.templating.list.filter((v) => v.type === "query").map((v) => v.name));
    return dashboard.panels.flatMap((panel) =>
      panel.targets.map((target) => {
        const expr = substituteVariables(target.expr, queryVariables, `${file} panel "${panel.title}" ${target.refId}`);
        return { file, panel: panel.title, refId: target.refId, expr, metrics: promqlMetricNames(expr) };
      }),
    );
  });
}

/** Every alerting and recording rule in the Prometheus rule file `file`, in file order. */
export function listRuleExpressions(file: string): RuleExpression[] {
  return loadRuleFile(file).groups.flatMap((group) =>
    group.rules.map((rule) =>
      "alert" in rule
        ? { group: group.name, name: rule.alert, kind: "alert" as const, expr: rule.expr }
        : { group: group.name, name: rule.record, kind: "record" as const, expr: rule.expr },
    ),
  );
}

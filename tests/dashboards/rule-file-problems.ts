import type { PrometheusRuleFile } from "./load-rule-file";

// The severities alert routing knows.
const ALERT_SEVERITIES = ["warning", "critical"] as const;

const PROMETHEUS_DURATION = /^(\d+(ms|[smhdwy]))+$/;
// Prometheus' naming convention for recorded series: level:metric:operations.
const RECORDING_RULE_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*:[a-zA-Z0-9_]+:[a-zA-Z0-9_]+$/;
const REQUIRED_ANNOTATIONS = ["summary", "description"];

/**
 * Every way a rule file breaks the project's alerting rules (each alert has a `for`, a known severity and
 * summary/description annotations; recorded names follow level:metric:operations; names are unique), as
 * readable messages; empty when it follows them all. Syntax is promtool's job.
 */
export function ruleFileProblems(ruleFile: PrometheusRuleFile): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const rule of ruleFile.groups.flatMap((group) => group.rules)) {
    const name = "alert" in rule ? rule.alert : rule.record;
    if (seen.has(name)) problems.push(`${name}: defined twice`);
    seen.add(name);
    if (!("alert" in rule)) {
      if (!RECORDING_RULE_NAME.test(name)) problems.push(`${name}: recorded name must be level:metric:operations`);
      continue;
    }
    if (rule.for === undefined || !PROMETHEUS_DURATION.test(rule.for)) problems.push(`${name}: needs a "for" duration`);
    const severity = rule.labels?.severity;
    if (!ALERT_SEVERITIES.some((known) => known === severity)) {
      problems.push(`${name}: severity label must be one of ${ALERT_SEVERITIES.join(", ")}`);
    }
    for (const annotation of REQUIRED_ANNOTATIONS) {
      if (!rule.annotations?.[annotation]?.trim()) problems.push(`${name}: needs a ${annotation} annotation`);
    }
  }
  return problems;
}

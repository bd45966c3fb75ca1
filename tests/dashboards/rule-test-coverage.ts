import fs from "node:fs";
import { load } from "js-yaml";
import { z } from "zod";
import type { PrometheusRuleFile } from "./load-rule-file";
import { promqlMetricNames } from "./promql-metric-names";

const ruleTestFileSchema = z.object({
  rule_files: z.array(z.string()),
  tests: z.array(
    z.object({
      name: z.string().optional(),
      alert_rule_test: z.array(z.object({ alertname: z.string(), exp_alerts: z.array(z.unknown()).nullish() })).optional(),
      promql_expr_test: z.array(z.object({ expr: z.string(), exp_samples: z.array(z.unknown()).nullish() })).optional(),
    }),
  ),
});

/** A promtool unit-test file (`promtool test rules`), as far as the coverage check reads it. */
export type PromtoolRuleTestFile = z.infer<typeof ruleTestFileSchema>;

/** Parses promtool test-file YAML text; throws when it is not shaped like one. */
export function parseRuleTestFile(yamlText: string): PromtoolRuleTestFile {
  return ruleTestFileSchema.parse(load(yamlText));
}

/** Reads and parses a promtool unit-test file. */
export function loadRuleTestFile(file: string): PromtoolRuleTestFile {
  return parseRuleTestFile(fs.readFileSync(file, "utf8"));
}

/**
 * What the unit tests leave unproven: an alert with no case where it fires, an alert with no case where
 * it must stay silent, a recording rule whose value no promql_expr_test checks. Empty when all are covered.
 */
export function ruleTestCoverageGaps(ruleFile: PrometheusRuleFile, testFile: PromtoolRuleTestFile): string[] {
  const alertCases = testFile.tests.flatMap((test) => test.alert_rule_test ?? []);
  const exprCases = testFile.tests.flatMap((test) => test.promql_expr_test ?? []);
  const gaps: string[] = [];
  for (const rule of ruleFile.groups.flatMap((group) => group.rules)) {
    if ("alert" in rule) {
      const cases = alertCases.filter((testCase) => testCase.alertname === rule.alert);
      if (!cases.some((testCase) => (testCase.exp_alerts ?? []).length > 0)) gaps.push(`${rule.alert}: no case where it fires`);
      if (!cases.some((testCase) => (testCase.exp_alerts ?? []).length === 0)) gaps.push(`${rule.alert}: no case where it must not fire`);
    } else if (!exprCases.some((testCase) => promqlMetricNames(testCase.expr).includes(rule.record) && (testCase.exp_samples ?? []).length > 0)) {
      gaps.push(`${rule.record}: no promql_expr_test checks its value`);
    }
  }
  return gaps;
}

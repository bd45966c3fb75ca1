import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadRuleFile, parseRuleFile } from "./load-rule-file";
import { loadMetricsCatalog } from "./metrics-catalog";
import { listRuleExpressions } from "./promql-inventory";
import { runPromtool } from "./promtool";
import { ruleFileProblems } from "./rule-file-problems";
import { loadRuleTestFile, parseRuleTestFile, ruleTestCoverageGaps } from "./rule-test-coverage";
import { unknownMetricNames } from "./unknown-metric-names";

const DASHBOARDS_DIR = path.resolve(__dirname, "../../dashboards");
const RULES_FILE = path.join(DASHBOARDS_DIR, "alerts.yaml");
const RULE_TESTS_FILE = path.join(DASHBOARDS_DIR, "alerts.test.yaml");
/** Infra's HPA reads this series through prometheus-adapter: its name must never change. */
const HPA_RECORDING_RULE = "inference_server:queue_duration_us_per_request:rate1m";
const REQUIRED_ALERTS = [
  "InferenceServerDown",
  "InferenceServerAbsent",
  "InferenceHighP99Latency",
  "InferenceHighErrorRatio",
  "InferenceQueueBacklog",
  "InferenceQueueTimeHigh",
  "GpuMemoryNearFull",
];

const rulesText = fs.readFileSync(RULES_FILE, "utf8");
const ruleTestsText = fs.readFileSync(RULE_TESTS_FILE, "utf8");

let scratchDir = "";
beforeAll(() => {
  scratchDir = fs.mkdtempSync(path.join(os.tmpdir(), "alert-rules-test-"));
});
afterAll(() => {
  fs.rmSync(scratchDir, { recursive: true, force: true });
});

/** Replaces exactly one occurrence of `from`, so a mutation cannot silently miss its target. */
function replaceOnce(text: string, from: string, to: string): string {
  const index = text.indexOf(from);
  if (index < 0 || text.indexOf(from, index + 1) >= 0) throw new Error(`expected exactly one ${JSON.stringify(from)}`);
  return text.slice(0, index) + to + text.slice(index + from.length);
}

/** Writes a rule file and its unit tests side by side (the tests name `alerts.yaml`), returns the test path. */
function writeRuleTestPair(name: string, rules: string, tests: string): string {
  const dir = path.join(scratchDir, name);
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, "alerts.yaml"), rules);
  fs.writeFileSync(path.join(dir, "alerts.test.yaml"), tests);
  return path.join(dir, "alerts.test.yaml");
}

describe("alert and recording rules", () => {
  const ruleFile = loadRuleFile(RULES_FILE);
  const rules = listRuleExpressions(RULES_FILE);

  it("has every required alert and the autoscaler's recording rule", () => {
    const alerts = rules.filter((rule) => rule.kind === "alert").map((rule) => rule.name);
    expect(alerts).toEqual(expect.arrayContaining(REQUIRED_ALERTS));
    expect(rules).toContainEqual(expect.objectContaining({ kind: "record", name: HPA_RECORDING_RULE }));
  });

  it("gives every alert a for duration, a severity and summary/description annotations", () => {
    expect(ruleFileProblems(ruleFile)).toEqual([]);
  });

  it("reports an alert without severity or for, and a recorded name off the naming convention", () => {
    let broken = replaceOnce(rulesText, "        for: 2m\n        labels:\n          severity: critical\n", "        labels:\n          team: serving\n");
    broken = replaceOnce(broken, "record: model:inference_queue_duration_seconds:p99_rate5m", "record: queue_p99");
    expect(ruleFileProblems(parseRuleFile(broken))).toEqual([
      "queue_p99: recorded name must be level:metric:operations",
      'InferenceServerDown: needs a "for" duration',
      "InferenceServerDown: severity label must be one of warning, critical",
    ]);
  });

  it("queries only catalog metrics and series recorded in the same file", () => {
    const catalog = loadMetricsCatalog(path.join(DASHBOARDS_DIR, "metrics-catalog.json"));
    const recorded = new Set(rules.filter((rule) => rule.kind === "record").map((rule) => rule.name));
    expect(unknownMetricNames(rules.map((rule) => rule.expr), catalog, recorded)).toEqual([]);
    expect(unknownMetricNames(["model:not_recorded:p99_rate5m > 1"], catalog, recorded)).toEqual(["model:not_recorded:p99_rate5m"]);
  });

  it("passes promtool check rules", () => {
    const result = runPromtool(["check", "rules", RULES_FILE]);
    expect(result.output).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(result.exitCode).toBe(0);
  });

  it("fails promtool check rules when an expression does not parse", () => {
    const file = path.join(scratchDir, "unparsable.yaml");
    fs.writeFileSync(file, replaceOnce(rulesText, 'expr: up{job="inference-server"} == 0', 'expr: up{job="inference-server"} == '));
    const result = runPromtool(["check", "rules", file]);
    expect(result.exitCode).not.toBe(0);
    expect(result.output).toMatch(/parse error/i);
  });

  it("passes its promtool unit tests", () => {
    const result = runPromtool(["test", "rules", RULE_TESTS_FILE]);
    expect(result.output).toContain("SUCCESS");
    expect(result.exitCode).toBe(0);
  });

  it("fails the unit tests when an expected recorded value is wrong", () => {
    const tests = replaceOnce(ruleTestsText, "value: 7000", "value: 7001");
    const result = runPromtool(["test", "rules", writeRuleTestPair("wrong-expectation", rulesText, tests)]);
    expect(result.exitCode).not.toBe(0);
    expect(result.output).toContain("FAILED");
  });

  it("fails the unit tests when the autoscaler's rule loses its guard for idle pods", () => {
    const unguarded = replaceOnce(rulesText, "          or\n          sum by (namespace, pod) (rate(nv_inference_request_success[1m])) * 0\n", "");
    const result = runPromtool(["test", "rules", writeRuleTestPair("unguarded", unguarded, ruleTestsText)]);
    expect(result.exitCode).not.toBe(0);
    expect(result.output).toContain(HPA_RECORDING_RULE);
  });

  it("fails the unit tests when an alert threshold is loosened", () => {
    const loosened = replaceOnce(rulesText, ") > 0.95", ") > 0.999");
    const result = runPromtool(["test", "rules", writeRuleTestPair("loosened", loosened, ruleTestsText)]);
    expect(result.exitCode).not.toBe(0);
    expect(result.output).toContain("GpuMemoryNearFull");
  });

  it("tests every alert firing and staying silent, and every recording rule's value", () => {
    expect(ruleTestCoverageGaps(ruleFile, loadRuleTestFile(RULE_TESTS_FILE))).toEqual([]);
  });

  it("reports an alert whose firing case was removed from the unit tests", () => {
    const testFile = parseRuleTestFile(ruleTestsText);
    for (const test of testFile.tests) {
      test.alert_rule_test = test.alert_rule_test?.filter((testCase) => testCase.alertname !== "GpuMemoryNearFull" || (testCase.exp_alerts ?? []).length === 0);
    }
    expect(ruleTestCoverageGaps(ruleFile, testFile)).toEqual(["GpuMemoryNearFull: no case where it fires"]);
  });
});

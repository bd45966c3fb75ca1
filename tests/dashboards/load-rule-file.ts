import fs from "node:fs";
import { load } from "js-yaml";
import { z } from "zod";

const ruleSchema = z.union([
  z.object({
    alert: z.string(),
    expr: z.string(),
    for: z.string().optional(),
    labels: z.record(z.string(), z.string()).optional(),
    annotations: z.record(z.string(), z.string()).optional(),
  }),
  z.object({ record: z.string(), expr: z.string(), labels: z.record(z.string(), z.string()).optional() }),
]);

const ruleFileSchema = z.object({
  groups: z.array(z.object({ name: z.string(), interval: z.string().optional(), rules: z.array(ruleSchema) })),
});

/** A Prometheus rule file (`groups:`), as far as the checks read it. */
export type PrometheusRuleFile = z.infer<typeof ruleFileSchema>;

/** Parses rule-file YAML text; throws when it is not YAML or not shaped like a rule file. */
export function parseRuleFile(yamlText: string): PrometheusRuleFile {
  return ruleFileSchema.parse(load(yamlText));
}

/** Reads and parses a Prometheus rule file. */
export function loadRuleFile(file: string): PrometheusRuleFile {
  return parseRuleFile(fs.readFileSync(file, "utf8"));
}

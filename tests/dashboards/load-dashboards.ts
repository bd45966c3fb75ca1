import fs from "node:fs";
import path from "node:path";
import { z } from "zod";

const datasourceRefSchema = z.object({ type: z.string(), uid: z.string() });

const targetSchema = z.object({
  refId: z.string(),
  expr: z.string(),
  legendFormat: z.string().optional(),
  datasource: datasourceRefSchema.optional(),
});

const panelSchema = z.object({
  id: z.number().int(),
  type: z.string(),
  title: z.string(),
  description: z.string().optional(),
  datasource: datasourceRefSchema.optional(),
  gridPos: z.object({ h: z.number().int(), w: z.number().int(), x: z.number().int(), y: z.number().int() }),
  fieldConfig: z.object({ defaults: z.object({ unit: z.string().optional() }) }).optional(),
  targets: z.array(targetSchema).default([]),
});

const variableSchema = z.object({
  name: z.string(),
  type: z.string(),
  // Grafana stores a query variable's query as an object ({query, refId}) since v10, as a string before.
  query: z.union([z.string(), z.object({ query: z.string() })]).optional(),
  definition: z.string().optional(),
  datasource: z.union([datasourceRefSchema, z.string(), z.null()]).optional(),
  multi: z.boolean().optional(),
  includeAll: z.boolean().optional(),
  allValue: z.string().nullable().optional(),
});

const dashboardSchema = z.object({
  uid: z.string(),
  title: z.string(),
  tags: z.array(z.string()),
  time: z.object({ from: z.string(), to: z.string() }),
  refresh: z.string(),
  schemaVersion: z.number().int(),
  templating: z.object({ list: z.array(variableSchema) }),
  panels: z.array(panelSchema),
});

/** The parts of a Grafana dashboard JSON model that the checks and the PromQL inventory read. */
export type GrafanaDashboard = z.infer<typeof dashboardSchema>;
export type GrafanaPanel = GrafanaDashboard["panels"][number];
export type GrafanaVariable = GrafanaDashboard["templating"]["list"][number];

/** A dashboard and the file it came from (a name relative to the dashboards folder). */
export interface LoadedDashboard {
  readonly file: string;
  readonly dashboard: GrafanaDashboard;
}

// The one JSON file in the dashboards folder that is not a dashboard.
const METRICS_CATALOG_FILE = "metrics-catalog.json";

/** The variable query a query variable runs, whichever way Grafana stored it. */
export function variableQueryText(variable: GrafanaVariable): string {
  if (typeof variable.query === "string") return variable.query;
  return variable.query?.query ?? variable.definition ?? "";
}

/** Parses a dashboard JSON model; throws a zod error naming the field when its shape is wrong. */
export function parseDashboard(json: unknown): GrafanaDashboard {
  return dashboardSchema.parse(json);
}

/**
 * Every Grafana dashboard in `dir`: each `*.json` file except the metrics catalog, sorted by file name.
 * Throws when a file is not JSON or not shaped like a dashboard.
 */
export function loadDashboards(dir: string): LoadedDashboard[] {
  return fs
    .readdirSync(dir)
    .filter((file) => file.endsWith(".json") && file !== METRICS_CATALOG_FILE)
    .sort()
    .map((file) => {
      const fullPath = path.join(dir, file);
      try {
        return { file, dashboard: parseDashboard(JSON.parse(fs.readFileSync(fullPath, "utf8"))) };
      } catch (error) {
        throw new Error(`${fullPath}: ${String(error)}`, { cause: error });
      }
    });
}

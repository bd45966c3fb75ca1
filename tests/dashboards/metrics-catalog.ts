import fs from "node:fs";
import { z } from "zod";

const catalogMetricSchema = z.object({
  name: z.string().regex(/^[a-zA-Z_:][a-zA-Z0-9_:]*$/),
  type: z.enum(["counter", "gauge", "histogram"]),
  unit: z.string().min(1),
  labels: z.array(z.string()),
  source: z.enum(["inference-server", "dcgm-exporter", "kube-state-metrics", "cadvisor", "prometheus", "inference-perf"]),
  onlyWithGpu: z.boolean().optional(),
  help: z.string().min(1),
});

const catalogFileSchema = z.object({
  description: z.string(),
  metrics: z.array(catalogMetricSchema),
});

/** One metric that dashboards and rules may query, as listed in `dashboards/metrics-catalog.json`. */
export type CatalogMetric = z.infer<typeof catalogMetricSchema>;

/** The metrics catalog with a lookup from a series name (histograms: `_bucket`/`_sum`/`_count`) to its metric. */
export interface MetricsCatalog {
  readonly metrics: readonly CatalogMetric[];
  /** The catalog entry a series name in PromQL belongs to, or undefined when the name is not exported. */
  metricOfSeries(seriesName: string): CatalogMetric | undefined;
}

const HISTOGRAM_SERIES_SUFFIXES = ["_bucket", "_sum", "_count"];

function seriesNamesOf(metric: CatalogMetric): string[] {
  return metric.type === "histogram" ? HISTOGRAM_SERIES_SUFFIXES.map((suffix) => metric.name + suffix) : [metric.name];
}

/**
 * Reads and validates the metrics catalog. Throws when the file does not match the catalog's shape or
 * lists a metric twice.
 */
export function loadMetricsCatalog(file: string): MetricsCatalog {
  const { metrics } = catalogFileSchema.parse(JSON.parse(fs.readFileSync(file, "utf8")));
  const bySeriesName = new Map<string, CatalogMetric>();
  for (const metric of metrics) {
    for (const seriesName of seriesNamesOf(metric)) {
      if (bySeriesName.has(seriesName)) throw new Error(`${file}: series ${seriesName} is listed twice`);
      bySeriesName.set(seriesName, metric);
    }
  }
  return { metrics, metricOfSeries: (seriesName) => bySeriesName.get(seriesName) };
}

import type { MetricsCatalog } from "./metrics-catalog";
import { promqlMetricNames } from "./promql-metric-names";

/**
 * The metric names that `exprs` select but the catalog does not list (and `alsoKnown`, e.g. series that
 * recording rules produce, does not contain), sorted and without duplicates.
 */
export function unknownMetricNames(exprs: readonly string[], catalog: MetricsCatalog, alsoKnown: ReadonlySet<string> = new Set()): string[] {
  const unknown = new Set(
    exprs.flatMap(promqlMetricNames).filter((name) => catalog.metricOfSeries(name) === undefined && !alsoKnown.has(name)),
  );
  return [...unknown].sort();
}

import { type RenderedChart, renderVegaLiteChart } from "./vega-lite-chart";

export type { RenderedChart } from "./vega-lite-chart";

/** One measured load level of one series (a server, a baseline) on the chart. */
export interface LatencyChartPoint {
  readonly series: string;
  /** Load level, for the tooltip and to connect points in load order. */
  readonly level: number;
  readonly throughput: number;
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly p99Ms: number;
}

/**
 * Renders latency (p50, p90, p99) against throughput (see {@link renderVegaLiteChart}).
 * `log` scales both axes, for series whose magnitudes differ by orders (a tiny model beside a large one).
 */
export async function renderLatencyChart(
  points: readonly LatencyChartPoint[], title: string, scale: "linear" | "log" = "linear",
): Promise<RenderedChart> {
  const values = points.flatMap((point, order) => [
    { ...point, order, percentile: "p50", latencyMs: point.p50Ms },
    { ...point, order, percentile: "p90", latencyMs: point.p90Ms },
    { ...point, order, percentile: "p99", latencyMs: point.p99Ms },
  ]);
  const spec = {
    title,
    data: { values },
    mark: { type: "line", point: true },
    encoding: {
      x: { field: "throughput", type: "quantitative", title: "throughput (infer/s)", scale: { type: scale } },
      y: { field: "latencyMs", type: "quantitative", title: "latency (ms)", scale: { type: scale } },
      color: { field: "series", type: "nominal", title: null },
      strokeDash: { field: "percentile", type: "nominal", title: "percentile", scale: { range: [[1, 0], [8, 4], [2, 3]] }, legend: { symbolType: "stroke", symbolStrokeWidth: 2, encode: { symbols: { update: { stroke: { value: "#444" } } } } } },
      detail: { field: "percentile" },
      order: { field: "order", type: "quantitative" },
      tooltip: [{ field: "series" }, { field: "level" }, { field: "percentile" }, { field: "throughput", format: ".1f" }, { field: "latencyMs", format: ".2f" }],
    },
  } as const;
  return renderVegaLiteChart(spec);
}

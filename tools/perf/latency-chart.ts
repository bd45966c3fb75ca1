import { type RenderedChart, renderVegaLiteChart } from "./vega-lite-chart";

export type { RenderedChart } from "./vega-lite-chart";

/** One measured load level of one series (a server, a baseline) on the chart. */
export interface LatencyChartPoint {
  readonly series: string;
  /** Load level, for the tooltip and to connect points in load order. */
  readonly level: number;
  /** What the point's label says (`c4`, `40/s`); the level when absent. */
  readonly levelLabel?: string;
  /** Whether its windows agreed (perf_analyzer's stability rule); stable when absent. */
  readonly stable?: boolean;
  readonly throughput: number;
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly p99Ms: number;
}

const STABILITY = ["stable", "did not stabilize"] as const;

const X_FIELD = "throughput";

/** The points of one stability: filled circles for stable levels, hollow crosses for the others (one legend). */
function pointLayer(measurement: (typeof STABILITY)[number], mark: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return {
    transform: [{ filter: `datum.measurement === '${measurement}'` }],
    mark: { type: "point", ...mark },
    encoding: {
      x: { field: X_FIELD, type: "quantitative" },
      y: { field: "latencyMs", type: "quantitative" },
      color: { field: "series", type: "nominal", title: null },
      shape: { field: "measurement", type: "nominal", title: "measurement", scale: { domain: [...STABILITY], range: ["circle", "cross"] } },
      tooltip: [{ field: "series" }, { field: "level" }, { field: "measurement" }, { field: "percentile" }, { field: X_FIELD, format: ".1f" }, { field: "latencyMs", format: ".2f" }],
    },
  };
}

/**
 * The vega-lite spec of latency (p50, p90, p99) against throughput: each series' percentiles joined in load
 * order (a sweep whose throughput falls back is drawn folding back, not sorted away), every p50 and p99 point
 * labelled with its load level, points whose windows never agreed drawn as hollow crosses, and latency on a log
 * axis so that the levels below the knee stay apart. `log` puts throughput on a log axis too, for series whose
 * magnitudes differ by orders (a tiny model beside a large one).
 */
export function latencyChartSpec(points: readonly LatencyChartPoint[], title: string, throughputScale: "linear" | "log" = "linear"): Record<string, unknown> {
  const values = points.flatMap((point, order) => (["p50", "p90", "p99"] as const).map((percentile) => ({
    series: point.series,
    level: point.level,
    label: point.levelLabel ?? String(point.level),
    measurement: point.stable === false ? STABILITY[1] : STABILITY[0],
    throughput: point.throughput,
    order,
    percentile,
    latencyMs: percentile === "p50" ? point.p50Ms : percentile === "p90" ? point.p90Ms : point.p99Ms,
  })));
  // A log scale never includes zero (vega-lite warns when told not to); a linear one starts at the data.
  const xScale = throughputScale === "log" ? { type: "log" } : { type: "linear", zero: false };
  const x = { field: X_FIELD, type: "quantitative", title: "throughput (infer/s)", scale: xScale };
  const y = { field: "latencyMs", type: "quantitative", title: "latency (ms, log scale)", scale: { type: "log" } };
  const color = { field: "series", type: "nominal", title: null };
  return {
    title: { text: title, subtitle: "labels: load level of each point; hollow crosses: windows that never stabilized" },
    data: { values },
    layer: [
      {
        mark: { type: "line" },
        encoding: {
          x, y, color,
          strokeDash: { field: "percentile", type: "nominal", title: "percentile", scale: { range: [[1, 0], [8, 4], [2, 3]] }, legend: { symbolType: "stroke", symbolStrokeWidth: 2, encode: { symbols: { update: { stroke: { value: "#444" } } } } } },
          detail: { field: "percentile" },
          order: { field: "order", type: "quantitative" },
        },
      },
      pointLayer(STABILITY[0], { filled: true, size: 60 }),
      pointLayer(STABILITY[1], { filled: false, size: 110, strokeWidth: 2 }),
      {
        // p99 labels above their points, p50 labels below: the two curves never share a label.
        transform: [{ filter: "datum.percentile !== 'p90'" }],
        mark: { type: "text", fontSize: 11, align: "left", dx: 6 },
        encoding: {
          x, y,
          text: { field: "label" },
          color,
          yOffset: { condition: { test: "datum.percentile === 'p99'", value: -9 }, value: 10 },
        },
      },
    ],
  };
}

/** Renders {@link latencyChartSpec} (see {@link renderVegaLiteChart}). */
export function renderLatencyChart(
  points: readonly LatencyChartPoint[], title: string, throughputScale: "linear" | "log" = "linear",
): Promise<RenderedChart> {
  return renderVegaLiteChart(latencyChartSpec(points, title, throughputScale));
}

import sharp from "sharp";

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

export interface RenderedChart {
  readonly svg: string;
  readonly png: Buffer;
}

/**
 * Renders latency (p50, p90, p99) against throughput: vega-lite compiled to vega, drawn headless by a vega View
 * with renderer 'none' into SVG, and the SVG rasterized to PNG by sharp. No browser, canvas or network needed.
 * `log` scales both axes, for series whose magnitudes differ by orders (a tiny model beside a large one).
 */
export async function renderLatencyChart(
  points: readonly LatencyChartPoint[], title: string, scale: "linear" | "log" = "linear",
): Promise<RenderedChart> {
  // vega and vega-lite are ES modules with top-level await: they can only be loaded with import().
  const [vega, vegaLite] = await Promise.all([import("vega"), import("vega-lite")]);
  const values = points.flatMap((point, order) => [
    { ...point, order, percentile: "p50", latencyMs: point.p50Ms },
    { ...point, order, percentile: "p90", latencyMs: point.p90Ms },
    { ...point, order, percentile: "p99", latencyMs: point.p99Ms },
  ]);
  const spec = {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title,
    width: 640,
    height: 360,
    background: "white",
    config: { legend: { labelLimit: 400 } },
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
  const compiled = vegaLite.compile(spec as unknown as Parameters<typeof vegaLite.compile>[0]).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: "none" });
  const svg = await view.toSVG();
  view.finalize();
  const png = await sharp(Buffer.from(svg)).png().toBuffer();
  return { svg, png };
}

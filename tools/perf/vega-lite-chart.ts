import sharp from "sharp";
import { CHART_FONT_FAMILY, useChartFont } from "./chart-font";
import { PerfError } from "./perf-error";

export interface RenderedChart {
  readonly svg: string;
  readonly png: Buffer;
}

/**
 * What every chart of the project shares: size, white background (for the PNG), legends that do not truncate, and
 * the packaged font (generic sans-serif after it, for an SVG opened where DejaVu Sans is not installed).
 */
const CHART_DEFAULTS = {
  $schema: "https://vega.github.io/schema/vega-lite/v6.json",
  width: 640,
  height: 360,
  background: "white",
  config: { font: `${CHART_FONT_FAMILY}, sans-serif`, legend: { labelLimit: 400 } },
};

/**
 * Draws a vega-lite spec (over {@link CHART_DEFAULTS}) headless: compiled to vega, rendered by a vega View with
 * renderer 'none' into SVG, and the SVG rasterized to PNG by sharp with the packaged font ({@link useChartFont}).
 * No browser, canvas, installed font or network needed.
 */
export async function renderVegaLiteChart(spec: Readonly<Record<string, unknown>>): Promise<RenderedChart> {
  // vega and vega-lite are ES modules with top-level await: they can only be loaded with import().
  const [vega, vegaLite] = await Promise.all([import("vega"), import("vega-lite")]).catch((error: unknown) => {
    // The server images leave the chart packages out (server/Dockerfile): say so rather than print a stack.
    if ((error as { code?: unknown }).code !== "ERR_MODULE_NOT_FOUND") throw error;
    throw new PerfError("charts need the vega, vega-lite and dejavu-fonts-ttf packages, which the server image leaves out: "
      + "run without --report there, or from an npm install of the package");
  });
  const compiled = vegaLite.compile({ ...CHART_DEFAULTS, ...spec } as unknown as Parameters<typeof vegaLite.compile>[0]).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: "none" });
  const svg = await view.toSVG();
  view.finalize();
  useChartFont();
  const png = await sharp(Buffer.from(svg)).png().toBuffer();
  return { svg, png };
}

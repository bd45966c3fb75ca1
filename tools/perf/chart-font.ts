import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/** The family every chart's text is set in (vega's `font`), shipped with the package. */
export const CHART_FONT_FAMILY = "DejaVu Sans";

let configured = false;

/**
 * Makes the chart font the one fontconfig finds, whatever the machine has installed. sharp rasterizes a chart's SVG
 * with librsvg, which asks fontconfig for fonts; on a machine without fonts or without a fontconfig configuration
 * (a slim container, the in-cluster load test Job, a GPU machine) every letter came out as a box ("Fontconfig
 * error: Cannot load default config file"). So the process's FONTCONFIG_FILE names a configuration of our own that
 * holds only the TrueType files of the `dejavu-fonts-ttf` package (DejaVu Sans is what Debian's fonts-dejavu-core
 * gives sans-serif, so charts look as they did where fonts were installed, and alike everywhere). TrueType, because
 * the FreeType inside sharp reads no WOFF, all that the `@fontsource/*` packages ship. fontconfig reads the
 * variable when it first initializes, at the first text rasterized: call this before rendering. The configuration
 * is written once per font directory, under the temporary directory.
 */
export function useChartFont(): void {
  if (configured) return;
  const fontDirectory = path.join(path.dirname(require.resolve("dejavu-fonts-ttf/package.json")), "ttf");
  const config = [
    '<?xml version="1.0"?>',
    '<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">',
    "<fontconfig>",
    `  <dir>${escapeXml(fontDirectory)}</dir>`,
    `  <alias><family>sans-serif</family><prefer><family>${CHART_FONT_FAMILY}</family></prefer></alias>`,
    "</fontconfig>",
    "",
  ].join("\n");
  const digest = createHash("sha256").update(config).digest("hex").slice(0, 16);
  const file = path.join(os.tmpdir(), `gcp-inference-stack-chart-fonts-${digest}.conf`);
  writeFileSync(file, config);
  process.env["FONTCONFIG_FILE"] = file;
  configured = true;
}

function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

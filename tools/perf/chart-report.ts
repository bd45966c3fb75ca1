import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { RenderedChart } from "./latency-chart";

export interface ChartReportContent {
  readonly title: string;
  /** Setup facts, one per line (model, load, versions). */
  readonly details: readonly string[];
  readonly chart: RenderedChart;
  readonly table: ReportTable;
  /** Tables after the main one, each under its title (an ensemble's composing models). */
  readonly moreTables?: readonly (ReportTable & { readonly title: string })[];
}

interface ReportTable {
  readonly header: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

/** Files a report consists of, relative to its directory. */
const CHART_REPORT_FILES = { svg: "latency-vs-throughput.svg", png: "latency-vs-throughput.png", html: "index.html" } as const;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/**
 * Writes the chart as SVG and PNG and a self-contained HTML page (SVG inlined, no scripts or network) with the
 * setup and the results table. Creates `dir` if needed; returns the paths written.
 */
export async function writeChartReport(dir: string, content: ChartReportContent): Promise<{ svg: string; png: string; html: string }> {
  await mkdir(dir, { recursive: true });
  const files = {
    svg: path.join(dir, CHART_REPORT_FILES.svg),
    png: path.join(dir, CHART_REPORT_FILES.png),
    html: path.join(dir, CHART_REPORT_FILES.html),
  };
  const cell = (tag: "th" | "td", text: string): string => `<${tag}>${escapeHtml(text)}</${tag}>`;
  const tableHtml = (table: ReportTable): string => `<table>
<thead><tr>${table.header.map((title) => cell("th", title)).join("")}</tr></thead>
<tbody>
${table.rows.map((row) => `<tr>${row.map((text) => cell("td", text)).join("")}</tr>`).join("\n")}
</tbody>
</table>`;
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(content.title)}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2rem; color: #222; }
table { border-collapse: collapse; margin-top: 1rem; font-size: 0.85rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.6rem; text-align: right; }
th:first-child, td:first-child { text-align: left; }
ul { color: #555; }
h2 { font-size: 1.05rem; margin-top: 1.5rem; }
</style>
</head>
<body>
<h1>${escapeHtml(content.title)}</h1>
<ul>
${content.details.map((line) => `<li>${escapeHtml(line)}</li>`).join("\n")}
</ul>
<figure>
${content.chart.svg}
<figcaption>Latency against throughput (<a href="${CHART_REPORT_FILES.png}">PNG</a>, <a href="${CHART_REPORT_FILES.svg}">SVG</a>)</figcaption>
</figure>
${tableHtml(content.table)}
${(content.moreTables ?? []).map((table) => `<h2>${escapeHtml(table.title)}</h2>\n${tableHtml(table)}`).join("\n")}
</body>
</html>
`;
  await Promise.all([writeFile(files.svg, content.chart.svg), writeFile(files.png, content.chart.png), writeFile(files.html, html)]);
  return files;
}

import { type RenderedChart, renderVegaLiteChart } from "../perf/index";
import type { RatedPoint } from "./candidate-results";
import type { TuneSummary } from "./tune-summary";
import { describeSettings } from "./tuned-settings";

type Role = "pick" | "not confirmed" | "starting config" | "Pareto front" | "other candidates";
const ROLES: readonly Role[] = ["pick", "not confirmed", "starting config", "Pareto front", "other candidates"];

/**
 * The search's best point is the pick only when the verdict wrote it (`tuned`); when the side-by-side check kept
 * the starting configuration, calling it the pick contradicted the verdict above the chart.
 */
function roleOf(point: RatedPoint, confirmed: boolean): Role {
  if (point.picked) return confirmed ? "pick" : "not confirmed";
  if (point.candidate.id === "start") return "starting config";
  return point.onParetoFront ? "Pareto front" : "other candidates";
}

function labelOf(point: RatedPoint, confirmed: boolean): string {
  if (point.picked) return confirmed ? `pick (${point.candidate.id})` : `not confirmed (${point.candidate.id})`;
  if (point.candidate.id === "start") return confirmed ? "start" : "start (kept)";
  return "";
}

/**
 * The vega-lite spec of p99 latency against throughput, one dot per measured candidate: the Pareto front joined by
 * a line, the starting configuration and the pick marked and labelled (the search's best as "not confirmed", and
 * the start as kept, when the verdict kept the starting configuration), and the latency budget as a dashed line
 * when there is one.
 */
export function tuneChartSpec(
  points: readonly RatedPoint[], title: string, latencyBudgetMs: number | undefined, outcome: TuneSummary["outcome"],
): Record<string, unknown> {
  const confirmed = outcome === "tuned";
  const values = points.map((point) => ({
    role: roleOf(point, confirmed),
    candidate: point.candidate.id,
    configuration: describeSettings(point.candidate.settings),
    concurrency: point.point.concurrency,
    throughput: point.throughput,
    p99Ms: point.p99Ms,
    onFront: point.onParetoFront,
    confirmed,
    label: labelOf(point, confirmed),
  }));
  const x = { field: "throughput", type: "quantitative", title: "throughput (infer/s)", scale: { zero: false } };
  const y = { field: "p99Ms", type: "quantitative", title: "p99 latency (ms)", scale: { zero: false } };
  const layers: Record<string, unknown>[] = [
    {
      // The Pareto front, joined (the pick and the start are on it when nothing beats them).
      transform: [{ filter: "datum.onFront" }],
      mark: { type: "line", color: "#e45756", strokeWidth: 1.5 },
      encoding: { x, y, order: { field: "throughput", type: "quantitative" } },
    },
    {
      mark: { type: "point", filled: true, size: 90, opacity: 0.9 },
      encoding: {
        x, y,
        color: { field: "role", type: "nominal", title: null, scale: { domain: ROLES, range: ["#d62728", "#8c564b", "#1f77b4", "#ff7f0e", "#9a9a9a"] } },
        shape: { field: "role", type: "nominal", title: null, scale: { domain: ROLES, range: ["diamond", "triangle-up", "square", "circle", "circle"] } },
        size: { condition: { test: "datum.role === 'pick' || datum.role === 'starting config' && !datum.confirmed", value: 260 }, value: 90 },
        tooltip: [{ field: "candidate" }, { field: "configuration" }, { field: "concurrency" }, { field: "throughput", format: ".1f" }, { field: "p99Ms", format: ".2f" }],
      },
    },
    {
      transform: [{ filter: "datum.label !== ''" }],
      mark: { type: "text", align: "left", dx: 9, dy: -9, fontSize: 12 },
      encoding: { x, y, text: { field: "label" } },
    },
  ];
  if (latencyBudgetMs !== undefined) {
    layers.push({
      data: { values: [{ budget: latencyBudgetMs, label: `latency budget ${latencyBudgetMs} ms` }] },
      layer: [
        { mark: { type: "rule", strokeDash: [6, 4], color: "#555" }, encoding: { y: { field: "budget", type: "quantitative" } } },
        { mark: { type: "text", align: "left", baseline: "bottom", x: 4, dy: -3, color: "#555" }, encoding: { y: { field: "budget", type: "quantitative" }, text: { field: "label" } } },
      ],
    });
  }
  return { title, data: { values }, layer: layers };
}

/** Renders {@link tuneChartSpec}. */
export async function renderTuneChart(
  points: readonly RatedPoint[], title: string, latencyBudgetMs: number | undefined, outcome: TuneSummary["outcome"],
): Promise<RenderedChart> {
  return renderVegaLiteChart(tuneChartSpec(points, title, latencyBudgetMs, outcome));
}

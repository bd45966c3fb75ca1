/**
 * Prometheus text format 0.0.4, written directly: the per-model families have tens of series per model, and
 * building them through prom-client's label objects took ~50 ms (on the event loop) for 200 models.
 * Formatting follows prom-client's, so a family reads the same whichever writes it.
 */

export type MetricType = "counter" | "gauge" | "histogram";

/** One family: its `# HELP` and `# TYPE` lines, then its sample lines (none while it has no series). */
export function metricFamily(name: string, help: string, type: MetricType, samples: readonly string[]): string {
  const header = `# HELP ${name} ${escapeText(help)}\n# TYPE ${name} ${type}`;
  return samples.length === 0 ? header : `${header}\n${samples.join("\n")}`;
}

/** `name="value"`, the value escaped as the format asks. */
export function labelPair(name: string, value: string): string {
  return `${name}="${escapeText(value).replace(/"/g, '\\"')}"`;
}

/** A sample value: NaN and the infinities as the format spells them. */
export function sampleValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (!Number.isFinite(value)) return value < 0 ? "-Inf" : "+Inf";
  return String(value);
}

function escapeText(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

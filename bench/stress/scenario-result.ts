/** One pass/fail criterion of a scenario, with the figure it was judged on. */
export interface ScenarioCheck {
  readonly name: string;
  readonly passed: boolean;
  readonly detail: string;
}

/** What a scenario reports: its checks, its figures (for the tables), and examples worth a look. */
export interface ScenarioResult {
  /** `a` .. `e`, as in the campaign's description. */
  readonly id: string;
  readonly title: string;
  readonly passed: boolean;
  readonly durationMs: number;
  readonly checks: readonly ScenarioCheck[];
  readonly figures: Readonly<Record<string, number | string>>;
  readonly examples: readonly string[];
}

export function check(name: string, passed: boolean, detail: string): ScenarioCheck {
  return { name, passed, detail };
}

export function scenarioResult(
  id: string, title: string, startedMs: number, checks: readonly ScenarioCheck[],
  figures: Readonly<Record<string, number | string>>, examples: readonly string[] = [],
): ScenarioResult {
  return { id, title, passed: checks.every((c) => c.passed), durationMs: Math.round(performance.now() - startedMs), checks, figures, examples };
}

/** The p-th percentile (0..100) of `values`, nearest rank; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export function round(value: number, digits = 1): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/** Progress lines go to stderr, so the report on stdout stays clean. */
export type StressLog = (line: string) => void;

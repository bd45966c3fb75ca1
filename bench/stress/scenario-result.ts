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

/**
 * The in-flight budget's stated bound (docs/security.md, "Memory per request and requests in flight"): under any
 * number of requests at once, the server's peak RSS above its resident set before them is at most the budget plus
 * this many times the largest request's body (what the budget does not hold: memory freed a moment after its bytes
 * leave the budget, decode workers' garbage, socket buffers), plus {@link BUDGET_SLACK_FIXED_BYTES}. Memory, not
 * time: the verdict does not depend on the machine's speed.
 */
export const BUDGET_SLACK_LARGEST_REQUESTS = 3;

/** What a first burst costs a freshly started server whatever its requests' sizes: decode worker threads, allocator arenas. */
export const BUDGET_SLACK_FIXED_BYTES = 64 * 1024 * 1024;

/** Checks `peakBytes` against the budget's stated bound for a burst whose largest request body is `largestRequestBytes`. */
export function budgetBoundCheck(name: string, peakBytes: number, budgetBytes: number, largestRequestBytes: number): ScenarioCheck {
  const MiB = 1024 * 1024;
  const bound = budgetBytes + BUDGET_SLACK_LARGEST_REQUESTS * largestRequestBytes + BUDGET_SLACK_FIXED_BYTES;
  return check(
    `${name}: peak RSS <= the budget + ${BUDGET_SLACK_LARGEST_REQUESTS}x the largest request + ${BUDGET_SLACK_FIXED_BYTES / MiB} MiB (${round(bound / MiB)} MiB)`,
    peakBytes <= bound, `+${round(peakBytes / MiB)} MiB`,
  );
}

/** Progress lines go to stderr, so the report on stdout stays clean. */
export type StressLog = (line: string) => void;

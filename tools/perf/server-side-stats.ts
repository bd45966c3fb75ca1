import type { DurationStat, ModelStatistics } from "../../client/index";

/**
 * The model a run measures and, for an ensemble, the models its steps run (each possibly an ensemble itself),
 * from `ensemble_scheduling.step` of the configurations.
 */
export interface ModelSteps {
  readonly name: string;
  /** The configured version; undefined for "latest" (a step's -1) or whichever served (the measured model). */
  readonly version: string | undefined;
  readonly steps: readonly ModelSteps[];
}

/** The statistics-extension counters that changed over a measurement, summed over the model's versions. */
export interface ServerSideStats {
  readonly inferenceCount: number;
  readonly executionCount: number;
  readonly success: DurationStat;
  readonly queue: DurationStat;
  readonly computeInput: DurationStat;
  readonly computeInfer: DurationStat;
  readonly computeOutput: DurationStat;
  /** An ensemble's steps, in step order: the ensemble scheduler itself neither queues nor computes. */
  readonly composing?: readonly ComposingModelStats[];
}

/** What one step of an ensemble did over the measurement. */
export interface ComposingModelStats {
  readonly name: string;
  /** The configured version, or else the highest one the statistics list (perf_analyzer's choice). */
  readonly version: string;
  readonly stats: ServerSideStats;
}

/** Server-side averages per request, in µs, as perf_analyzer prints them. */
export interface ServerBreakdown {
  /** Average request latency inside the server (`success` time per request). */
  readonly requestUs: number;
  /** Request latency not spent queued or computing: the frontend's share (clamped at 0). */
  readonly overheadUs: number;
  readonly queueUs: number;
  readonly computeInputUs: number;
  readonly computeInferUs: number;
  readonly computeOutputUs: number;
}

/** One composing model of an ensemble, flattened depth-first for tables (depth 1 = a step of the measured model). */
export interface ComposingBreakdown {
  readonly name: string;
  readonly version: string;
  readonly depth: number;
  readonly inferenceCount: number;
  readonly executionCount: number;
  readonly successCount: number;
  /** The step's own requests per request of the measured model (1 for a step every request runs once). */
  readonly requestsPerTopLevelRequest: number;
  readonly breakdown: ServerBreakdown;
}

const ZERO: DurationStat = { count: 0, ns: 0 };

export const EMPTY_SERVER_STATS: ServerSideStats = {
  inferenceCount: 0, executionCount: 0, success: ZERO, queue: ZERO, computeInput: ZERO, computeInfer: ZERO, computeOutput: ZERO,
};

type Phase = "queue" | "computeInput" | "computeInfer" | "computeOutput";
const PHASES: readonly Phase[] = ["queue", "computeInput", "computeInfer", "computeOutput"];

function minus(after: DurationStat, before: DurationStat | undefined): DurationStat {
  return { count: after.count - (before?.count ?? 0), ns: after.ns - (before?.ns ?? 0) };
}

function plus(a: DurationStat, b: DurationStat): DurationStat {
  return { count: a.count + b.count, ns: a.ns + b.ns };
}

function ownDelta(before: readonly ModelStatistics[], after: readonly ModelStatistics[]): ServerSideStats {
  return after.reduce<ServerSideStats>((total, end) => {
    const start = before.find((candidate) => candidate.name === end.name && candidate.version === end.version);
    const s = start?.inference_stats;
    const e = end.inference_stats;
    return mergeServerStats(total, {
      inferenceCount: end.inference_count - (start?.inference_count ?? 0),
      executionCount: end.execution_count - (start?.execution_count ?? 0),
      success: minus(e.success, s?.success),
      queue: minus(e.queue, s?.queue),
      computeInput: minus(e.compute_input, s?.compute_input),
      computeInfer: minus(e.compute_infer, s?.compute_infer),
      computeOutput: minus(e.compute_output, s?.compute_output),
    });
  }, EMPTY_SERVER_STATS);
}

function versionOf(model: ModelSteps, statistics: readonly ModelStatistics[]): string {
  if (model.version !== undefined) return model.version;
  const served = statistics.filter((entry) => entry.name === model.name).map((entry) => Number(entry.version));
  return served.length === 0 ? "" : String(Math.max(...served));
}

/**
 * What happened on the server between two `/stats` snapshots. Without `model`, every entry counts (the snapshots
 * hold one model's versions). With it, the model's entries count, versions matched by name and version and
 * summed (an unversioned run counts whichever version served it; a version that appeared in between counts from
 * zero), and an ensemble gets its steps' deltas the same way, recursively.
 */
export function serverStatsDelta(before: readonly ModelStatistics[], after: readonly ModelStatistics[], model?: ModelSteps): ServerSideStats {
  if (model === undefined) return ownDelta(before, after);
  const own = ownDelta(before, after.filter((entry) => entry.name === model.name && (model.version === undefined || entry.version === model.version)));
  if (model.steps.length === 0) return own;
  return {
    ...own,
    composing: model.steps.map((step) => ({ name: step.name, version: versionOf(step, after), stats: serverStatsDelta(before, after, step) })),
  };
}

/** Sum of two deltas of the same model (consecutive windows merged into one measurement). */
export function mergeServerStats(a: ServerSideStats, b: ServerSideStats): ServerSideStats {
  const merged: ServerSideStats = {
    inferenceCount: a.inferenceCount + b.inferenceCount,
    executionCount: a.executionCount + b.executionCount,
    success: plus(a.success, b.success),
    queue: plus(a.queue, b.queue),
    computeInput: plus(a.computeInput, b.computeInput),
    computeInfer: plus(a.computeInfer, b.computeInfer),
    computeOutput: plus(a.computeOutput, b.computeOutput),
  };
  if (a.composing === undefined || b.composing === undefined) return a.composing === undefined ? { ...merged, composing: b.composing } : { ...merged, composing: a.composing };
  const other = b.composing;
  return { ...merged, composing: a.composing.map((step, index) => ({ ...step, stats: mergeServerStats(step.stats, other[index]!.stats) })) };
}

/** Time spent queued or computing, in ns: an ensemble's is its steps' (it neither queues nor computes itself). */
function phaseNs(stats: ServerSideStats, phase: Phase): number {
  if (stats.composing === undefined || stats.composing.length === 0) return stats[phase].ns;
  return stats.composing.reduce((total, step) => total + phaseNs(step.stats, phase), 0);
}

/**
 * Per-request averages the way perf_analyzer's CSV computes them: every duration divided by the number of
 * successful requests, overhead = request − queue − compute, never negative. For an ensemble, queue and compute
 * are its steps' totals per ensemble request (what perf_analyzer reports as the ensemble's), so the overhead is
 * what the ensemble adds around them. All zero when nothing succeeded.
 */
export function serverBreakdown(stats: ServerSideStats): ServerBreakdown {
  const requests = stats.success.count;
  const perRequestUs = (ns: number): number => (requests === 0 ? 0 : ns / requests / 1000);
  const requestUs = perRequestUs(stats.success.ns);
  const [queueUs, computeInputUs, computeInferUs, computeOutputUs] = PHASES.map((phase) => perRequestUs(phaseNs(stats, phase))) as [number, number, number, number];
  const overheadUs = Math.max(0, requestUs - queueUs - computeInputUs - computeInferUs - computeOutputUs);
  return { requestUs, overheadUs, queueUs, computeInputUs, computeInferUs, computeOutputUs };
}

/** An ensemble's composing models, depth-first in step order, each with its own per-request breakdown. */
export function composingBreakdowns(stats: ServerSideStats): ComposingBreakdown[] {
  const topLevelRequests = stats.success.count;
  const walk = (steps: readonly ComposingModelStats[], depth: number): ComposingBreakdown[] => steps.flatMap((step) => [
    {
      name: step.name, version: step.version, depth,
      inferenceCount: step.stats.inferenceCount, executionCount: step.stats.executionCount, successCount: step.stats.success.count,
      requestsPerTopLevelRequest: topLevelRequests === 0 ? 0 : step.stats.success.count / topLevelRequests,
      breakdown: serverBreakdown(step.stats),
    },
    ...walk(step.stats.composing ?? [], depth + 1),
  ]);
  return walk(stats.composing ?? [], 1);
}

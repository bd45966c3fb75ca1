import type { DurationStat, ModelStatistics } from "../../client/index";

/** The statistics-extension counters that changed over a measurement, summed over the model's versions. */
export interface ServerSideStats {
  readonly inferenceCount: number;
  readonly executionCount: number;
  readonly success: DurationStat;
  readonly queue: DurationStat;
  readonly computeInput: DurationStat;
  readonly computeInfer: DurationStat;
  readonly computeOutput: DurationStat;
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

const ZERO: DurationStat = { count: 0, ns: 0 };

export const EMPTY_SERVER_STATS: ServerSideStats = {
  inferenceCount: 0, executionCount: 0, success: ZERO, queue: ZERO, computeInput: ZERO, computeInfer: ZERO, computeOutput: ZERO,
};

function minus(after: DurationStat, before: DurationStat | undefined): DurationStat {
  return { count: after.count - (before?.count ?? 0), ns: after.ns - (before?.ns ?? 0) };
}

function plus(a: DurationStat, b: DurationStat): DurationStat {
  return { count: a.count + b.count, ns: a.ns + b.ns };
}

/**
 * What happened on the server between two `/stats` snapshots of one model. Versions are matched by name and
 * version and summed, so an unversioned run counts whichever version served it; a version that appeared in
 * between counts from zero.
 */
export function serverStatsDelta(before: readonly ModelStatistics[], after: readonly ModelStatistics[]): ServerSideStats {
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

/** Sum of two deltas (consecutive windows merged into one measurement). */
export function mergeServerStats(a: ServerSideStats, b: ServerSideStats): ServerSideStats {
  return {
    inferenceCount: a.inferenceCount + b.inferenceCount,
    executionCount: a.executionCount + b.executionCount,
    success: plus(a.success, b.success),
    queue: plus(a.queue, b.queue),
    computeInput: plus(a.computeInput, b.computeInput),
    computeInfer: plus(a.computeInfer, b.computeInfer),
    computeOutput: plus(a.computeOutput, b.computeOutput),
  };
}

/**
 * Per-request averages the way perf_analyzer's CSV computes them: every duration divided by the number of
 * successful requests, overhead = request − queue − compute, never negative. All zero when nothing succeeded.
 */
export function serverBreakdown(stats: ServerSideStats): ServerBreakdown {
  const requests = stats.success.count;
  const perRequestUs = (stat: DurationStat): number => (requests === 0 ? 0 : stat.ns / requests / 1000);
  const requestUs = perRequestUs(stats.success);
  const queueUs = perRequestUs(stats.queue);
  const computeInputUs = perRequestUs(stats.computeInput);
  const computeInferUs = perRequestUs(stats.computeInfer);
  const computeOutputUs = perRequestUs(stats.computeOutput);
  const overheadUs = Math.max(0, requestUs - queueUs - computeInputUs - computeInferUs - computeOutputUs);
  return { requestUs, overheadUs, queueUs, computeInputUs, computeInferUs, computeOutputUs };
}

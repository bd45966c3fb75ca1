import type { ResponseOutcome, ResponseStatsRecorder } from "../request/response-timing";

/** Triton's `$duration_stat`. */
export interface DurationStat {
  count: number;
  ns: number;
}

export interface BatchStat {
  batch_size: number;
  compute_input: DurationStat;
  compute_infer: DurationStat;
  compute_output: DurationStat;
}

/** Triton's InferResponseStatistics: the responses at one index of decoupled requests. */
export interface ResponseStat {
  compute_infer: DurationStat;
  compute_output: DurationStat;
  success: DurationStat;
  fail: DurationStat;
  empty_response: DurationStat;
  cancel: DurationStat;
}

/** One entry of the statistics extension's `model_stats`, field names as on the wire. */
export interface ModelStatisticsSnapshot {
  name: string;
  version: string;
  last_inference: number;
  inference_count: number;
  execution_count: number;
  inference_stats: {
    success: DurationStat; fail: DurationStat; queue: DurationStat;
    compute_input: DurationStat; compute_infer: DurationStat; compute_output: DurationStat;
    cache_hit: DurationStat; cache_miss: DurationStat;
  };
  /** A decoupled model's responses by their index in their request ("0", "1", ...). */
  response_stats: Record<string, ResponseStat>;
  batch_stats: BatchStat[];
  memory_usage: never[];
}

const zero = (): DurationStat => ({ count: 0, ns: 0 });

function add(stat: DurationStat, ns: number, count = 1): void {
  stat.count += count;
  stat.ns += ns;
}

/** Durations of one execution, as the scheduler measured them. */
export interface ExecutionTimings {
  readonly batchSize: number;
  readonly requestCount: number;
  readonly computeInputNs: number;
  readonly computeInferNs: number;
  readonly computeOutputNs: number;
}

/**
 * Accumulates Triton's per-model-version statistics. Compute durations count once per request (as Triton does:
 * every request in a batch is charged the batch's compute time); batch_stats count once per execution.
 */
export class ModelStatistics implements ResponseStatsRecorder {
  readonly #name: string;
  readonly #version: string;
  #lastInferenceMs = 0;
  #inferenceCount = 0;
  #executionCount = 0;
  readonly #stats = {
    success: zero(), fail: zero(), queue: zero(), compute_input: zero(), compute_infer: zero(),
    compute_output: zero(), cache_hit: zero(), cache_miss: zero(),
  };
  readonly #batchStats = new Map<number, BatchStat>();
  readonly #responseStats: ResponseStat[] = [];

  constructor(name: string, version: string) {
    this.#name = name;
    this.#version = version;
  }

  recordExecution(timings: ExecutionTimings): void {
    this.#executionCount++;
    this.#inferenceCount += timings.batchSize;
    this.#lastInferenceMs = Date.now();
    add(this.#stats.compute_input, timings.computeInputNs * timings.requestCount, timings.requestCount);
    add(this.#stats.compute_infer, timings.computeInferNs * timings.requestCount, timings.requestCount);
    add(this.#stats.compute_output, timings.computeOutputNs * timings.requestCount, timings.requestCount);
    let batch = this.#batchStats.get(timings.batchSize);
    if (batch === undefined) {
      batch = { batch_size: timings.batchSize, compute_input: zero(), compute_infer: zero(), compute_output: zero() };
      this.#batchStats.set(timings.batchSize, batch);
    }
    add(batch.compute_input, timings.computeInputNs);
    add(batch.compute_infer, timings.computeInferNs);
    add(batch.compute_output, timings.computeOutputNs);
  }

  recordSuccess(requestNs: number, queueNs: number): void {
    add(this.#stats.success, requestNs);
    add(this.#stats.queue, queueNs);
  }

  /** A response served from the response cache: `lookupNs` is the lookup (Triton's cache_hit duration). */
  recordCacheHit(lookupNs: number): void {
    add(this.#stats.cache_hit, lookupNs);
  }

  /** A request the cache did not have: `ns` is the lookup plus the insertion of its response. */
  recordCacheMiss(ns: number): void {
    add(this.#stats.cache_miss, ns);
  }

  recordFailure(requestNs: number): void {
    add(this.#stats.fail, requestNs);
  }

  /** One response of a decoupled request, counted as Triton's InferenceStatsAggregator::UpdateResponse* count it. */
  recordResponse(index: number, outcome: ResponseOutcome, inferNs: number, outputNs: number, totalNs: number): void {
    const stat = (this.#responseStats[index] ??= {
      compute_infer: zero(), compute_output: zero(), success: zero(), fail: zero(), empty_response: zero(), cancel: zero(),
    });
    if (outcome === "cancel") {
      add(stat.cancel, totalNs);
      return;
    }
    add(stat.compute_infer, inferNs);
    if (outcome === "empty") {
      add(stat.empty_response, totalNs);
      return;
    }
    if (outcome === "success" || outputNs > 0) add(stat.compute_output, outputNs);
    add(outcome === "success" ? stat.success : stat.fail, totalNs);
  }

  snapshot(): ModelStatisticsSnapshot {
    const copy = (s: DurationStat): DurationStat => ({ count: s.count, ns: s.ns });
    const stats = this.#stats;
    return {
      name: this.#name,
      version: this.#version,
      last_inference: this.#lastInferenceMs,
      inference_count: this.#inferenceCount,
      execution_count: this.#executionCount,
      inference_stats: {
        success: copy(stats.success), fail: copy(stats.fail), queue: copy(stats.queue),
        compute_input: copy(stats.compute_input), compute_infer: copy(stats.compute_infer),
        compute_output: copy(stats.compute_output), cache_hit: copy(stats.cache_hit), cache_miss: copy(stats.cache_miss),
      },
      response_stats: Object.fromEntries(this.#responseStats.flatMap((r, index) => (r === undefined ? [] : [[String(index), {
        compute_infer: copy(r.compute_infer), compute_output: copy(r.compute_output), success: copy(r.success), fail: copy(r.fail),
        empty_response: copy(r.empty_response), cancel: copy(r.cancel),
      }]]))),
      batch_stats: [...this.#batchStats.values()]
        .sort((a, b) => a.batch_size - b.batch_size)
        .map((b) => ({ batch_size: b.batch_size, compute_input: copy(b.compute_input), compute_infer: copy(b.compute_infer), compute_output: copy(b.compute_output) })),
      memory_usage: [],
    };
  }
}

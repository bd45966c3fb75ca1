import type { CoreObserver, ExecutionOutcome, FailureReason, ModelGauges, RequestOutcome } from "../core/index";
import { labelPair, metricFamily, type MetricType, sampleValue } from "./exposition-text";
import { LatencyHistogram } from "./latency-histogram";

const FAILURE_REASONS: readonly FailureReason[] = ["REJECTED", "CANCELED", "BACKEND", "OTHER"];

/** The most a scrape holds the event loop before letting requests through (one family may take longer). */
const SCRAPE_SLICE_MS = 1;

/** `model="…",version="…"`, written once per model version. */
function modelLabels(modelName: string, modelVersion: string): string {
  return `${labelPair("model", modelName)},${labelPair("version", modelVersion)}`;
}

/**
 * Running totals of one model version, made when the version is first seen. The hot path adds plain numbers here
 * (no label lookups, no allocation); they are written out at scrape time.
 */
class ModelTotals {
  successCount = 0;
  readonly failureCounts: Record<FailureReason, number> = { REJECTED: 0, CANCELED: 0, BACKEND: 0, OTHER: 0 };
  inferenceCount = 0;
  executionCount = 0;
  requestNs = 0;
  queueNs = 0;
  computeInputNs = 0;
  computeInferNs = 0;
  computeOutputNs = 0;
  cacheHits = 0;
  cacheMisses = 0;
  cacheHitNs = 0;
  cacheMissNs = 0;
  readonly requestSeconds = new LatencyHistogram();
  readonly queueSeconds = new LatencyHistogram();

  constructor(readonly labels: string) {}
}

/** Triton counts cumulative durations in whole microseconds. */
const microseconds = (ns: number): number => Math.floor(ns / 1000);

/** Triton's per-model counters, with their help text, and where each reads its value. */
const TRITON_COUNTERS: readonly { name: string; help: string; read: (totals: ModelTotals) => number }[] = [
  { name: "nv_inference_request_success", help: "Number of successful inference requests, all batch sizes", read: (t) => t.successCount },
  { name: "nv_inference_count", help: "Number of inferences performed (batch elements)", read: (t) => t.inferenceCount },
  { name: "nv_inference_exec_count", help: "Number of model executions performed (batches)", read: (t) => t.executionCount },
  { name: "nv_inference_request_duration_us", help: "Cumulative inference request duration in microseconds (successful requests)", read: (t) => microseconds(t.requestNs) },
  { name: "nv_inference_queue_duration_us", help: "Cumulative inference queuing duration in microseconds (successful requests)", read: (t) => microseconds(t.queueNs) },
  { name: "nv_inference_compute_input_duration_us", help: "Cumulative compute input duration in microseconds, charged to every request of a batch", read: (t) => microseconds(t.computeInputNs) },
  { name: "nv_inference_compute_infer_duration_us", help: "Cumulative compute inference duration in microseconds, charged to every request of a batch", read: (t) => microseconds(t.computeInferNs) },
  { name: "nv_inference_compute_output_duration_us", help: "Cumulative inference compute output duration in microseconds, charged to every request of a batch", read: (t) => microseconds(t.computeOutputNs) },
  { name: "nv_cache_num_hits_per_model", help: "Number of response cache hits per model", read: (t) => t.cacheHits },
  { name: "nv_cache_num_misses_per_model", help: "Number of response cache misses per model", read: (t) => t.cacheMisses },
  { name: "nv_cache_hit_duration_per_model", help: "Cumulative time requests spend retrieving a cached response per model (in microseconds)", read: (t) => microseconds(t.cacheHitNs) },
  { name: "nv_cache_miss_duration_per_model", help: "Cumulative time requests spend looking up and inserting responses into the cache on a cache miss (in microseconds)", read: (t) => microseconds(t.cacheMissNs) },
];

/** Per-model values the core reports as point-in-time gauges, read at scrape time. */
const SCRAPED_VALUES: readonly { name: string; help: string; type: MetricType; read: (gauges: ModelGauges) => number }[] = [
  { name: "nv_inference_pending_request_count", help: "Instantaneous number of pending requests awaiting execution per-model.", type: "gauge", read: (g) => g.pendingRequests },
  { name: "inference_queue_depth", help: "Requests waiting in the model's scheduler queue now", type: "gauge", read: (g) => g.queueDepth },
  { name: "inference_instance_count", help: "Model instances (workers) loaded for the model", type: "gauge", read: (g) => g.instanceCount },
  { name: "inference_instance_busy_seconds_total", help: "Busy time summed over the model's instances; rate / inference_instance_count is instance utilization", type: "counter", read: (g) => g.instanceBusySeconds },
  { name: "inference_instance_restarts_total", help: "Model instances whose worker thread died (crash, exit, out of memory) and were restarted", type: "counter", read: (g) => g.instanceRestarts },
];

const LATENCY_HISTOGRAMS: readonly { name: string; help: string; of: (totals: ModelTotals) => LatencyHistogram }[] = [
  { name: "inference_request_duration_seconds", help: "End-to-end latency of successful inference requests", of: (t) => t.requestSeconds },
  { name: "inference_queue_duration_seconds", help: "Time successful inference requests waited in the scheduler queue", of: (t) => t.queueSeconds },
];

/**
 * The per-model metrics: Triton's `nv_inference_*` (labels `model`, `version`) plus latency histograms, queue depth
 * and instance busy time. It is the {@link CoreObserver} the core calls on every request and execution; those calls
 * find the version's totals (two map lookups) and add to numbers there. {@link ModelMetrics.exposition} writes the
 * totals and the core's gauges as text at scrape time.
 *
 * Semantics follow Triton: a request counts once in success or failure; durations and the histograms cover
 * successful requests; every request of an execution is charged that execution's compute durations.
 */
export class ModelMetrics implements CoreObserver {
  readonly #totals = new Map<string, Map<string, ModelTotals>>();

  requestCompleted(outcome: RequestOutcome): void {
    const totals = this.#totalsOf(outcome.modelName, outcome.modelVersion);
    if (outcome.failureReason !== undefined) {
      totals.failureCounts[outcome.failureReason] += 1;
      return;
    }
    totals.successCount += 1;
    if (outcome.cache?.hit === true) {
      totals.cacheHits += 1;
      totals.cacheHitNs += outcome.cache.ns;
    } else if (outcome.cache !== undefined) {
      totals.cacheMisses += 1;
      totals.cacheMissNs += outcome.cache.ns;
    }
    totals.requestNs += outcome.requestNs;
    totals.queueNs += outcome.queueNs;
    totals.requestSeconds.observe(outcome.requestNs / 1e9);
    totals.queueSeconds.observe(outcome.queueNs / 1e9);
  }

  executionCompleted(outcome: ExecutionOutcome): void {
    const totals = this.#totalsOf(outcome.modelName, outcome.modelVersion);
    totals.inferenceCount += outcome.batchSize;
    totals.executionCount += 1;
    totals.computeInputNs += outcome.computeInputNs * outcome.requestCount;
    totals.computeInferNs += outcome.computeInferNs * outcome.requestCount;
    totals.computeOutputNs += outcome.computeOutputNs * outcome.requestCount;
  }

  /**
   * The per-model families as exposition text, for the models loaded now: every loaded version has all its series
   * (zero until used, so rates and ratios read 0 rather than "no data"); unloaded versions are forgotten. Written
   * family by family, handing the event loop back to requests whenever {@link SCRAPE_SLICE_MS} have passed, so that
   * a large repository's scrape (~1 MB for 200 models) delays a request by one slice, not by the whole scrape.
   */
  async exposition(loaded: readonly ModelGauges[]): Promise<string> {
    const current = loaded.map((gauges) => ({ gauges, totals: this.#totalsOf(gauges.modelName, gauges.modelVersion) }));
    this.#forgetAllBut(new Set(current.map(({ totals }) => totals)));
    const families: (() => string)[] = [
      ...TRITON_COUNTERS.map(({ name, help, read }) => () =>
        metricFamily(name, help, "counter", current.map(({ totals }) => `${name}{${totals.labels}} ${sampleValue(read(totals))}`))),
      () => metricFamily("nv_inference_request_failure", "Number of failed inference requests, all batch sizes", "counter", current.flatMap(({ totals }) =>
        FAILURE_REASONS.map((reason) => `nv_inference_request_failure{${totals.labels},${labelPair("reason", reason)}} ${totals.failureCounts[reason]}`))),
      ...SCRAPED_VALUES.map(({ name, help, type, read }) => () =>
        metricFamily(name, help, type, current.map(({ gauges, totals }) => `${name}{${totals.labels}} ${sampleValue(read(gauges))}`))),
      () => metricFamily(
        "inference_instance_placement", "Model instances by instance kind, execution provider (cpu, cuda, tensorrt, webgpu) and device", "gauge",
        current.flatMap(({ gauges, totals }) => placementSamples(totals.labels, gauges)),
      ),
      ...LATENCY_HISTOGRAMS.map(({ name, help, of }) => () =>
        metricFamily(name, help, "histogram", current.flatMap(({ totals }) => of(totals).samples(name, totals.labels)))),
    ];
    const written: string[] = [];
    let sliceStart = performance.now();
    for (const family of families) {
      written.push(family());
      if (performance.now() - sliceStart >= SCRAPE_SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        sliceStart = performance.now();
      }
    }
    return written.join("\n\n");
  }

  #forgetAllBut(current: ReadonlySet<ModelTotals>): void {
    for (const [name, versions] of this.#totals) {
      for (const [version, totals] of versions) if (!current.has(totals)) versions.delete(version);
      if (versions.size === 0) this.#totals.delete(name);
    }
  }

  #totalsOf(modelName: string, modelVersion: string): ModelTotals {
    let versions = this.#totals.get(modelName);
    if (versions === undefined) {
      versions = new Map();
      this.#totals.set(modelName, versions);
    }
    let totals = versions.get(modelVersion);
    if (totals === undefined) {
      totals = new ModelTotals(modelLabels(modelName, modelVersion));
      versions.set(modelVersion, totals);
    }
    return totals;
  }
}

/** One series per distinct placement (kind, provider, device) of a version's instances, counting its instances. */
function placementSamples(labels: string, gauges: ModelGauges): string[] {
  const counts = new Map<string, number>();
  for (const p of gauges.placements) {
    const key = [
      labelPair("kind", p.kind), labelPair("provider", p.provider), labelPair("device", p.kind === "KIND_GPU" ? String(p.deviceId) : ""),
      // Only on software adapters, so that the series of real GPUs keep the labels dashboards already select on.
      ...(p.softwareAdapter === true ? [labelPair("adapter", "software")] : []),
    ].join(",");
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([placement, count]) => `inference_instance_placement{${labels},${placement}} ${count}`);
}

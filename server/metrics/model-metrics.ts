import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import type { CoreObserver, ExecutionOutcome, FailureReason, ModelGauges, RequestOutcome } from "../core/index";

/** Upper bounds, in seconds, of the latency histograms: 100 µs to 30 s in 1-2.5-5 steps (alert thresholds sit on bounds). */
export const LATENCY_BUCKETS_SECONDS: readonly number[] = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
];

const FAILURE_REASONS: readonly FailureReason[] = ["REJECTED", "CANCELED", "BACKEND", "OTHER"];

type ModelLabel = "model" | "version";
type ModelLabels = Readonly<Record<ModelLabel, string>>;
const MODEL_LABELS: ModelLabel[] = ["model", "version"];

/**
 * Running totals of one model version. The hot path adds plain numbers here (no label hashing, no allocation);
 * they are copied into prom-client counters at scrape time.
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

  constructor(
    readonly labels: ModelLabels,
    readonly requestSeconds: Histogram.Internal<ModelLabel>,
    readonly queueSeconds: Histogram.Internal<ModelLabel>,
  ) {}
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
const SCRAPED_VALUES: readonly { name: string; help: string; type: "gauge" | "counter"; read: (gauges: ModelGauges) => number }[] = [
  { name: "nv_inference_pending_request_count", help: "Instantaneous number of pending requests awaiting execution per-model.", type: "gauge", read: (g) => g.pendingRequests },
  { name: "inference_queue_depth", help: "Requests waiting in the model's scheduler queue now", type: "gauge", read: (g) => g.queueDepth },
  { name: "inference_instance_count", help: "Model instances (workers) loaded for the model", type: "gauge", read: (g) => g.instanceCount },
  { name: "inference_instance_busy_seconds_total", help: "Busy time summed over the model's instances; rate / inference_instance_count is instance utilization", type: "counter", read: (g) => g.instanceBusySeconds },
  { name: "inference_instance_restarts_total", help: "Model instances whose worker thread died (crash, exit, out of memory) and were restarted", type: "counter", read: (g) => g.instanceRestarts },
];

/**
 * The per-model metrics: Triton's `nv_inference_*` (labels `model`, `version`) plus latency histograms, queue depth
 * and instance busy time. It is the {@link CoreObserver} the core calls on every request and execution; those calls
 * only add to running totals and observe two cached histogram children. {@link ModelMetrics.refresh} copies the
 * totals and the core's gauges into the registry and must run before each scrape.
 *
 * Semantics follow Triton: a request counts once in success or failure; durations and the histograms cover
 * successful requests; every request of an execution is charged that execution's compute durations.
 */
export class ModelMetrics implements CoreObserver {
  readonly #totals = new Map<string, Map<string, ModelTotals>>();
  readonly #requestSeconds: Histogram<ModelLabel>;
  readonly #queueSeconds: Histogram<ModelLabel>;
  readonly #counters: { counter: Counter<ModelLabel>; read: (totals: ModelTotals) => number }[];
  readonly #failures: Counter<ModelLabel | "reason">;
  readonly #placements: Gauge<ModelLabel | "kind" | "provider" | "device">;
  readonly #scraped: { metric: Counter<ModelLabel> | Gauge<ModelLabel>; write: (labels: ModelLabels, value: number) => void; read: (gauges: ModelGauges) => number }[];

  constructor(registry: Registry) {
    const registers = [registry];
    this.#counters = TRITON_COUNTERS.map(({ name, help, read }) => ({ counter: new Counter({ name, help, labelNames: MODEL_LABELS, registers }), read }));
    this.#failures = new Counter({
      name: "nv_inference_request_failure", help: "Number of failed inference requests, all batch sizes", labelNames: [...MODEL_LABELS, "reason"], registers,
    });
    this.#scraped = SCRAPED_VALUES.map(({ name, help, type, read }) => {
      const config = { name, help, labelNames: MODEL_LABELS, registers };
      if (type === "gauge") {
        const gauge = new Gauge(config);
        return { metric: gauge, write: (labels, value) => gauge.set(labels, value), read };
      }
      // A counter whose total the core keeps: reset at each scrape, then set by one increment.
      const counter = new Counter(config);
      return { metric: counter, write: (labels, value) => counter.inc(labels, value), read };
    });
    this.#placements = new Gauge({
      name: "inference_instance_placement",
      help: "Model instances by instance kind, execution provider (cpu, cuda, tensorrt, webgpu) and device",
      labelNames: [...MODEL_LABELS, "kind", "provider", "device"], registers,
    });
    const buckets = [...LATENCY_BUCKETS_SECONDS];
    this.#requestSeconds = new Histogram({
      name: "inference_request_duration_seconds", help: "End-to-end latency of successful inference requests", labelNames: MODEL_LABELS, buckets, registers,
    });
    this.#queueSeconds = new Histogram({
      name: "inference_queue_duration_seconds", help: "Time successful inference requests waited in the scheduler queue", labelNames: MODEL_LABELS, buckets, registers,
    });
  }

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
   * Brings the registry up to date with the models loaded now: every loaded version gets all its series (zero
   * until used, so rates and ratios read 0 rather than "no data"), unloaded versions lose theirs.
   */
  refresh(loaded: readonly ModelGauges[]): void {
    const current = new Set(loaded.map((gauges) => this.#totalsOf(gauges.modelName, gauges.modelVersion)));
    for (const [name, versions] of this.#totals) {
      for (const [version, totals] of versions) {
        if (current.has(totals)) continue;
        versions.delete(version);
        this.#requestSeconds.remove(totals.labels);
        this.#queueSeconds.remove(totals.labels);
      }
      if (versions.size === 0) this.#totals.delete(name);
    }

    for (const { counter, read } of this.#counters) {
      counter.reset();
      for (const totals of current) counter.inc(totals.labels, read(totals));
    }
    this.#failures.reset();
    for (const totals of current) {
      for (const reason of FAILURE_REASONS) this.#failures.inc({ ...totals.labels, reason }, totals.failureCounts[reason]);
    }
    for (const { metric, write, read } of this.#scraped) {
      metric.reset();
      for (const gauges of loaded) write({ model: gauges.modelName, version: gauges.modelVersion }, read(gauges));
    }
    this.#placements.reset();
    for (const gauges of loaded) {
      for (const p of gauges.placements) {
        this.#placements.inc({ model: gauges.modelName, version: gauges.modelVersion, kind: p.kind, provider: p.provider, device: p.kind === "KIND_GPU" ? String(p.deviceId) : "" });
      }
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
      const labels = { model: modelName, version: modelVersion };
      // zero() makes the buckets appear before the first observation.
      this.#requestSeconds.zero(labels);
      this.#queueSeconds.zero(labels);
      totals = new ModelTotals(labels, this.#requestSeconds.labels(labels), this.#queueSeconds.labels(labels));
      versions.set(modelVersion, totals);
    }
    return totals;
  }
}

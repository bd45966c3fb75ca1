import { collectDefaultMetrics, Gauge, Registry } from "prom-client";
import type { CoreObserver, ModelGauges } from "../core/index";
import { GpuMetrics, type NvidiaSmiRunner } from "./gpu-metrics";
import { HostMetrics, type ProcReader } from "./host-metrics";
import { ModelMetrics } from "./model-metrics";

/** One step of a loaded ensemble: `model` runs as a step of `ensemble`. */
export interface EnsembleStep {
  readonly ensemble: string;
  readonly model: string;
}

/** What {@link ServerMetrics} is built from. */
export interface ServerMetricsSettings {
  /** The per-model gauges of the models loaded now (the core's `modelGauges()`); called once per scrape. */
  readonly modelGauges: () => readonly ModelGauges[];
  /**
   * The steps of the ensembles loaded now; called once per scrape. Exported as `inference_ensemble_step_info`, so
   * that dashboards can count a client's ensemble request once rather than once more per step.
   */
  readonly ensembleSteps?: () => readonly EnsembleStep[];
  /** Export `nv_cpu_*` (`--allow-cpu-metrics`). */
  readonly cpuMetrics: boolean;
  /** Export `nv_gpu_*` where nvidia-smi finds a GPU (`--allow-gpu-metrics`). */
  readonly gpuMetrics: boolean;
  /** How often CPU and GPU metrics are sampled (`--metrics-interval-ms`). */
  readonly intervalMs: number;
  /** Node.js process metrics prefixed `inference_server_` (default true). */
  readonly processMetrics?: boolean;
  /** Test seams: where /proc and nvidia-smi output come from. */
  readonly readProc?: ProcReader;
  readonly runNvidiaSmi?: NvidiaSmiRunner;
}

/** Prefix of prom-client's default Node.js process metrics, so they never collide with Triton's names. */
export const PROCESS_METRICS_PREFIX = "inference_server_";

/**
 * Everything the metrics endpoint exports: the per-model metrics (fed by {@link ServerMetrics.observer}, written
 * as text by {@link ModelMetrics}), then a prom-client registry with host CPU and memory, GPUs, ensemble steps and
 * Node.js process metrics. Owns the sampling timer; {@link ServerMetrics.close} stops it.
 */
export class ServerMetrics {
  /** Hand this to the core's `observe()`; its methods only add to counters. */
  readonly observer: CoreObserver;
  /** The Content-Type of {@link ServerMetrics.exposition} (Prometheus text format 0.0.4). */
  readonly contentType: string;
  readonly #registry = new Registry();
  readonly #models: ModelMetrics;
  readonly #modelGauges: () => readonly ModelGauges[];
  readonly #ensembleSteps: () => readonly EnsembleStep[];
  readonly #ensembleStepInfo: Gauge<"model" | "ensemble">;
  readonly #host: HostMetrics | undefined;
  readonly #gpus: GpuMetrics | undefined;
  readonly #timer: NodeJS.Timeout;

  constructor(settings: ServerMetricsSettings) {
    this.contentType = this.#registry.contentType;
    this.#modelGauges = settings.modelGauges;
    this.#ensembleSteps = settings.ensembleSteps ?? (() => []);
    this.#ensembleStepInfo = new Gauge({
      name: "inference_ensemble_step_info",
      help: "1 for each model that runs as a step of a loaded ensemble; its requests are counted again under the ensemble's",
      labelNames: ["model", "ensemble"],
      registers: [this.#registry],
    });
    this.#models = new ModelMetrics();
    this.observer = this.#models;
    if (settings.processMetrics ?? true) collectDefaultMetrics({ register: this.#registry, prefix: PROCESS_METRICS_PREFIX });
    this.#host = settings.cpuMetrics ? HostMetrics.start(this.#registry, settings.readProc) : undefined;
    this.#gpus = settings.gpuMetrics ? new GpuMetrics(this.#registry, settings.runNvidiaSmi) : undefined;
    void this.#gpus?.sample();
    this.#timer = setInterval(() => void this.sample(), settings.intervalMs);
    this.#timer.unref();
  }

  /** Takes one CPU and GPU sample now (the timer does this every interval); resolves once the GPU query is done. */
  sample(): Promise<void> {
    this.#host?.sample();
    return this.#gpus?.sample() ?? Promise.resolve();
  }

  /** The Prometheus text exposition of every metric, with the per-model values read now. */
  async exposition(): Promise<string> {
    const models = await this.#models.exposition(this.#modelGauges());
    this.#ensembleStepInfo.reset();
    for (const step of this.#ensembleSteps()) this.#ensembleStepInfo.set({ model: step.model, ensemble: step.ensemble }, 1);
    return `${models}\n\n${await this.#registry.metrics()}`;
  }

  /** Stops sampling. */
  close(): void {
    clearInterval(this.#timer);
  }
}

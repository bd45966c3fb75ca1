import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Gauge, Registry } from "prom-client";
import { REPORTED_PERCENTILES } from "./latency-summary";
import type { PerfMeasurement } from "./perf-measurement";
import type { PerfObserver } from "./run-inference-perf";

/** What a measurement belongs to: the labels of every series. */
export interface PerfRunLabels {
  readonly model: string;
  readonly protocol: "http" | "grpc";
  /** `concurrency` or `request-rate`: what `inference_perf_load_level` counts. */
  readonly mode: "concurrency" | "request-rate";
}

/** Where and how long to serve (`--prometheus-port`, `--prometheus-linger-ms`). */
export interface PrometheusResultsOptions {
  readonly port: number;
  /** Listen address; 0.0.0.0 in a pod so Prometheus can scrape it, 127.0.0.1 in tests. */
  readonly host?: string;
  /** After the run, keep serving until one scrape has read the final figures, for at most this long. */
  readonly lingerMs: number;
}

/**
 * inference-perf's results for Prometheus, while it runs: a `/metrics` endpoint (its own registry, nothing of
 * the process) with the latest measurement window's client-side figures, so a Grafana panel can show them
 * beside the server's own metrics:
 * - `inference_perf_throughput_infer_per_sec`: inferences per second of the last window;
 * - `inference_perf_latency_seconds{percentile}`: p50/p90/p95/p99 client latency of the last window;
 * - `inference_perf_load_level`: the concurrency or request rate being applied;
 * - `inference_perf_windows_total`: measurement windows completed (a scrape that sees it move has fresh figures).
 */
export class PrometheusResults implements PerfObserver {
  readonly #registry = new Registry();
  readonly #server: Server;
  readonly #labels: PerfRunLabels;
  readonly #lingerMs: number;
  #port = 0;
  readonly #throughput: Gauge<"model" | "protocol" | "mode">;
  readonly #latency: Gauge<"model" | "protocol" | "mode" | "percentile">;
  readonly #loadLevel: Gauge<"model" | "protocol" | "mode">;
  readonly #windows: Gauge<"model" | "protocol" | "mode">;
  #finished: Promise<void> | undefined;
  #scrapedAfterFinish: () => void = () => undefined;

  private constructor(labels: PerfRunLabels, lingerMs: number) {
    this.#labels = labels;
    this.#lingerMs = lingerMs;
    this.#server = createServer((request, response) => {
      if (request.method !== "GET" || request.url?.split("?")[0] !== "/metrics") {
        response.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
        return;
      }
      void this.#scrape(response);
    });
    const common = ["model", "protocol", "mode"] as const;
    const registers = [this.#registry];
    this.#throughput = new Gauge({ name: "inference_perf_throughput_infer_per_sec", help: "Inferences per second of inference-perf's last measurement window.", labelNames: common, registers });
    this.#latency = new Gauge({ name: "inference_perf_latency_seconds", help: "Client-side request latency percentiles of inference-perf's last measurement window.", labelNames: [...common, "percentile"], registers });
    this.#loadLevel = new Gauge({ name: "inference_perf_load_level", help: "Concurrency (closed loop) or requests per second (open loop) inference-perf applies.", labelNames: common, registers });
    this.#windows = new Gauge({ name: "inference_perf_windows_total", help: "Measurement windows inference-perf has completed.", labelNames: common, registers });
  }

  /** Starts serving `/metrics`; rejects when the port cannot be bound. */
  static async start(labels: PerfRunLabels, options: PrometheusResultsOptions): Promise<PrometheusResults> {
    const results = new PrometheusResults(labels, options.lingerMs);
    const server = results.#server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port, options.host ?? "0.0.0.0", () => {
        server.off("error", reject);
        resolve();
      });
    });
    results.#port = (server.address() as AddressInfo).port;
    return results;
  }

  /** The bound port (useful with port 0). */
  get port(): number {
    return this.#port;
  }

  /** A load level starts. */
  loadLevelStarted(level: number): void {
    this.#loadLevel.set(this.#labels, level);
  }

  /** A measurement window of the current load level completed. */
  windowMeasured(window: PerfMeasurement): void {
    this.#throughput.set(this.#labels, window.throughput);
    for (const percentile of REPORTED_PERCENTILES) {
      const latencyNs = window.latency?.percentilesNs.get(percentile);
      if (latencyNs !== undefined) this.#latency.set({ ...this.#labels, percentile: String(percentile) }, latencyNs / 1e9);
    }
    this.#windows.inc(this.#labels);
  }

  /**
   * The run is over: keeps serving until a scrape has read the final figures (or `lingerMs` passes), then
   * closes. Without the wait, the last load level would end between two scrapes and never reach Prometheus.
   * Calling it again returns the same promise.
   */
  finish(): Promise<void> {
    this.#finished ??= this.#lingerThenClose();
    return this.#finished;
  }

  async #lingerThenClose(): Promise<void> {
    if (this.#lingerMs > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise<void>((resolve) => {
          this.#scrapedAfterFinish = resolve;
        }),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, this.#lingerMs);
        }),
      ]);
      clearTimeout(timer);
    }
    await new Promise<void>((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }

  async #scrape(response: ServerResponse): Promise<void> {
    const body = await this.#registry.metrics();
    response.writeHead(200, { "content-type": this.#registry.contentType }).end(body, () => {
      if (this.#finished !== undefined) this.#scrapedAfterFinish();
    });
  }
}

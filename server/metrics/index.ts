export { ServerMetrics, PROCESS_METRICS_PREFIX, type EnsembleStep, type ServerMetricsSettings } from "./server-metrics";
export { startMetricsServer, METRICS_PATH, type MetricsListenOptions, type MetricsServer, type MetricsSource } from "./metrics-server";
export { LATENCY_BUCKETS_SECONDS } from "./latency-histogram";

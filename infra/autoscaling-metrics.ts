/**
 * The metric names the HPA scales on, from Prometheus series to the custom metrics API. The recording rule is
 * defined in dashboards/alerts.yaml; prometheus-adapter renames both series for the HPA's Pods metrics.
 */
export const autoscalingMetrics = {
  queueDuration: {
    /** Recording rule: average µs a request waited in the queue over 1 m, labelled namespace and pod. */
    prometheusSeries: "inference_server:queue_duration_us_per_request:rate1m",
    customMetric: "inference_queue_duration_us_per_request",
  },
  gpuUtilization: {
    /** DCGM gauge 0-100, scraped with honor_labels so `pod`/`namespace` name the pod using the GPU. */
    prometheusSeries: "DCGM_FI_DEV_GPU_UTIL",
    customMetric: "dcgm_gpu_utilization_percent",
  },
} as const;

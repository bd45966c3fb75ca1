import { autoscalingMetrics } from "../autoscaling-metrics";
import { monitoringNames } from "./monitoring-names";

function podsMetricRule(series: string, customMetric: string) {
  return {
    seriesQuery: `${series}{namespace!="",pod!=""}`,
    resources: { overrides: { namespace: { resource: "namespace" }, pod: { resource: "pod" } } },
    name: { matches: `^${series}$`, as: customMetric },
    metricsQuery: "avg(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)",
  };
}

/**
 * Values for the prometheus-adapter chart: it serves exactly the HPA's two Pods metrics from the cluster's
 * Prometheus (the chart's default rules are off; GKE's metrics-server keeps serving CPU and memory).
 */
export function prometheusAdapterValues(): Record<string, unknown> {
  const { queueDuration, gpuUtilization } = autoscalingMetrics;
  return {
    // The chart's default, pinned: the monitoring NetworkPolicy admits the API server on this port only.
    listenPort: monitoringNames.apiServerCalledPorts.prometheusAdapter,
    prometheus: { url: `http://${monitoringNames.kubePrometheusStack}-prometheus.${monitoringNames.namespace}.svc`, port: 9090 },
    rules: {
      default: false,
      custom: [
        podsMetricRule(queueDuration.prometheusSeries, queueDuration.customMetric),
        podsMetricRule(gpuUtilization.prometheusSeries, gpuUtilization.customMetric),
      ],
    },
  };
}

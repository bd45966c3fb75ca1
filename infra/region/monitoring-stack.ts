import * as k8s from "@pulumi/kubernetes";
import type * as pulumi from "@pulumi/pulumi";
import { inferenceServer } from "../inference-server";
import { type MonitoringAssets } from "../monitoring-assets";
import { type RegionConfig, type StackConfig } from "../stack-config";
import { kubePrometheusStackValues } from "./kube-prometheus-stack-values";
import { monitoringNames } from "./monitoring-names";
import { prometheusAdapterValues } from "./prometheus-adapter-values";

/** Arguments of {@link createMonitoringStack}. */
export interface MonitoringStackArgs {
  readonly region: RegionConfig;
  readonly monitoring: StackConfig["monitoring"];
  readonly grafanaAdminPassword?: pulumi.Output<string>;
  readonly assets: MonitoringAssets;
}

const PROMETHEUS_COMMUNITY_CHARTS = "https://prometheus-community.github.io/helm-charts";

/**
 * Monitoring inside one cluster: kube-prometheus-stack (Prometheus, Alertmanager, Grafana), a
 * ServiceMonitor for the server's :8002/metrics (job `inference-server`), a PodMonitor for GKE's managed
 * DCGM exporter (honorLabels keeps `pod`/`namespace` of the pod using the GPU, as the HPA needs), the
 * repository's rules as a PrometheusRule, its dashboards as sidecar ConfigMaps, and prometheus-adapter
 * serving the HPA's metrics.
 */
export function createMonitoringStack(name: string, args: MonitoringStackArgs, opts: pulumi.CustomResourceOptions): void {
  const namespaceName = monitoringNames.namespace;
  const namespace = new k8s.core.v1.Namespace(`${name}-monitoring-namespace`, { metadata: { name: namespaceName } }, opts);
  const inNamespace = { ...opts, dependsOn: [namespace] };
  const grafanaSecret = args.grafanaAdminPassword === undefined
    ? undefined
    : new k8s.core.v1.Secret(`${name}-grafana-admin`, {
      metadata: { name: monitoringNames.grafanaAdminSecret, namespace: namespaceName },
      stringData: { "admin-user": "admin", "admin-password": args.grafanaAdminPassword },
    }, inNamespace);
  const stack = new k8s.helm.v3.Release(`${name}-kube-prometheus-stack`, {
    name: monitoringNames.kubePrometheusStack,
    chart: "kube-prometheus-stack",
    version: args.monitoring.kubePrometheusStackVersion,
    repositoryOpts: { repo: PROMETHEUS_COMMUNITY_CHARTS },
    namespace: namespaceName,
    values: kubePrometheusStackValues({
      region: args.region.name,
      clusterName: args.region.clusterName,
      retention: args.monitoring.retention,
      grafanaAdminFromSecret: grafanaSecret !== undefined,
    }),
    // CRDs, a PVC and Grafana on fresh nodes take longer than Helm's 5 minutes.
    timeout: 900,
    cleanupOnFail: true,
    maxHistory: 5,
  }, { ...opts, dependsOn: grafanaSecret === undefined ? [namespace] : [namespace, grafanaSecret] });
  const afterCrds = { ...opts, dependsOn: [stack] };
  new k8s.helm.v3.Release(`${name}-prometheus-adapter`, {
    name: monitoringNames.prometheusAdapter,
    chart: "prometheus-adapter",
    version: args.monitoring.prometheusAdapterVersion,
    repositoryOpts: { repo: PROMETHEUS_COMMUNITY_CHARTS },
    namespace: namespaceName,
    values: prometheusAdapterValues(),
    timeout: 600,
    cleanupOnFail: true,
    maxHistory: 5,
  }, afterCrds);
  new k8s.apiextensions.CustomResource(`${name}-server-monitor`, {
    apiVersion: "monitoring.coreos.com/v1",
    kind: "ServiceMonitor",
    metadata: { name: inferenceServer.kubernetes.name, namespace: namespaceName },
    spec: {
      namespaceSelector: { matchNames: [inferenceServer.kubernetes.namespace] },
      selector: { matchLabels: { "app.kubernetes.io/name": inferenceServer.kubernetes.name } },
      endpoints: [{ port: "metrics", path: "/metrics", interval: "15s" }],
    },
  }, afterCrds);
  new k8s.apiextensions.CustomResource(`${name}-dcgm-monitor`, {
    apiVersion: "monitoring.coreos.com/v1",
    kind: "PodMonitor",
    metadata: { name: "gke-managed-dcgm-exporter", namespace: namespaceName },
    spec: {
      namespaceSelector: { matchNames: ["gke-managed-system"] },
      selector: { matchLabels: { "app.kubernetes.io/name": "gke-managed-dcgm-exporter" } },
      podMetricsEndpoints: [{ port: "metrics", interval: "15s", honorLabels: true }],
    },
  }, afterCrds);
  new k8s.apiextensions.CustomResource(`${name}-rules`, {
    apiVersion: "monitoring.coreos.com/v1",
    kind: "PrometheusRule",
    metadata: { name: "inference-server", namespace: namespaceName },
    spec: { groups: args.assets.rules.groups },
  }, afterCrds);
  for (const dashboard of args.assets.dashboards) {
    new k8s.core.v1.ConfigMap(`${name}-${dashboard.configMapName}`, {
      metadata: {
        name: dashboard.configMapName,
        namespace: namespaceName,
        labels: { [monitoringNames.dashboardLabel.key]: monitoringNames.dashboardLabel.value },
      },
      data: { [dashboard.fileName]: dashboard.json },
    }, inNamespace);
  }
}

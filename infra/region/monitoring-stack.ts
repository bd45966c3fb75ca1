import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { load as loadYaml } from "js-yaml";
import { inferenceServer } from "../inference-server";
import { KONNECTIVITY_AGENT } from "../policy/gke-api-rules";
import { type MonitoringAssets } from "../monitoring-assets";
import { type RegionConfig, type StackConfig } from "../stack-config";
import { kubePrometheusStackValues } from "./kube-prometheus-stack-values";
import { dcgmPodAttribution } from "./dcgm-pod-attribution";
import { monitoringNames } from "./monitoring-names";
import { addressesIn, allowIngress, denyAllIngress, podsIn, tcp } from "./network-policies";
import { podSecurityLabels } from "./pod-security";
import { prometheusAdapterValues } from "./prometheus-adapter-values";

/** Arguments of {@link createMonitoringStack}. */
export interface MonitoringStackArgs {
  readonly region: RegionConfig;
  /** The GKE cluster's name, the `cluster` external label of every series. */
  readonly clusterName: pulumi.Input<string>;
  readonly monitoring: StackConfig["monitoring"];
  readonly grafanaAdminPassword?: pulumi.Output<string>;
  /** A whole alertmanager.yaml; without it alerts reach Alertmanager but no receiver. */
  readonly alertmanagerConfig?: pulumi.Output<string>;
  readonly assets: MonitoringAssets;
}

/** The monitoring stack's parts other resources wait for. */
export interface MonitoringStack {
  /** kube-prometheus-stack: once it exists, so do the monitoring.coreos.com kinds. */
  readonly kubePrometheusStack: k8s.helm.v3.Release;
}

/**
 * Checks an alertmanager.yaml before it reaches the cluster (where a bad one only shows in the operator's log).
 *
 * @throws Error naming what is missing: a mapping with `route` and at least one receiver.
 */
export function checkAlertmanagerConfig(text: string): string {
  let parsed: unknown;
  try {
    parsed = loadYaml(text);
  } catch (error) {
    throw new Error(`alertmanagerConfig is not YAML: ${(error as Error).message}`, { cause: error });
  }
  const config = parsed as { route?: unknown; receivers?: unknown } | null;
  if (typeof config !== "object" || config === null || typeof config.route !== "object" || !Array.isArray(config.receivers) || config.receivers.length === 0) {
    throw new Error("alertmanagerConfig must be an alertmanager.yaml with a `route` and at least one entry under `receivers`");
  }
  return text;
}

const PROMETHEUS_COMMUNITY_CHARTS = "https://prometheus-community.github.io/helm-charts";

/**
 * Monitoring inside one cluster: kube-prometheus-stack (Prometheus, Alertmanager with the stack's receivers,
 * Grafana), a ServiceMonitor for the server's :8002/metrics (job `inference-server`), a PodMonitor for GKE's
 * managed DCGM exporter (relabelled so that `pod`/`namespace` name the pod using the GPU, as the HPA needs), the
 * repository's rules as a PrometheusRule, its dashboards as sidecar ConfigMaps, and prometheus-adapter
 * serving the HPA's metrics.
 */
export function createMonitoringStack(name: string, args: MonitoringStackArgs, opts: pulumi.CustomResourceOptions): MonitoringStack {
  const namespaceName = monitoringNames.namespace;
  // Privileged: kube-prometheus-stack's node-exporter needs the host's network, PID namespace and filesystem.
  // Audit and warnings still report anything beyond baseline.
  const namespace = new k8s.core.v1.Namespace(`${name}-monitoring-namespace`, {
    metadata: { name: namespaceName, labels: podSecurityLabels("privileged", "baseline") },
  }, opts);
  const inNamespace = { ...opts, dependsOn: [namespace] };
  // Grafana, Prometheus and Alertmanager reach each other; the API server reaches prometheus-adapter (the
  // custom metrics API the HPA reads) and the operator's admission webhook. Where GKE runs Konnectivity (current
  // versions) those calls come from its konnectivity-agent pods in kube-system, elsewhere from the control-plane
  // range: both are admitted, on those two ports only (policy rule gke-control-plane-ingress-through-konnectivity).
  // Nothing else gets in: operators use `kubectl port-forward`, which NetworkPolicy does not see.
  const apiServerCalls = tcp(...Object.values(monitoringNames.apiServerCalledPorts));
  denyAllIngress(`${name}-monitoring-deny-ingress`, namespaceName, inNamespace);
  allowIngress(`${name}-monitoring-ingress`, { name: "monitoring-internal-and-control-plane", namespace: namespaceName }, {}, [
    { from: [podsIn(namespaceName)] },
    { from: [podsIn(KONNECTIVITY_AGENT.namespace, { ...KONNECTIVITY_AGENT.podLabels })], ports: apiServerCalls },
    { from: addressesIn([args.region.network.masterCidr]), ports: apiServerCalls },
  ], inNamespace);
  const grafanaSecret = args.grafanaAdminPassword === undefined
    ? undefined
    : new k8s.core.v1.Secret(`${name}-grafana-admin`, {
      metadata: { name: monitoringNames.grafanaAdminSecret, namespace: namespaceName },
      stringData: { "admin-user": "admin", "admin-password": args.grafanaAdminPassword },
    }, inNamespace);
  const alertmanagerSecret = args.alertmanagerConfig === undefined
    ? undefined
    : new k8s.core.v1.Secret(`${name}-alertmanager-config`, {
      metadata: { name: monitoringNames.alertmanagerConfigSecret, namespace: namespaceName },
      stringData: { "alertmanager.yaml": pulumi.secret(args.alertmanagerConfig.apply(checkAlertmanagerConfig)) },
    }, inNamespace);
  const stack = new k8s.helm.v3.Release(`${name}-kube-prometheus-stack`, {
    name: monitoringNames.kubePrometheusStack,
    chart: "kube-prometheus-stack",
    version: args.monitoring.kubePrometheusStackVersion,
    repositoryOpts: { repo: PROMETHEUS_COMMUNITY_CHARTS },
    namespace: namespaceName,
    values: kubePrometheusStackValues({
      region: args.region.name,
      clusterName: args.clusterName,
      retention: args.monitoring.retention,
      grafanaAdminFromSecret: grafanaSecret !== undefined,
      alertmanagerConfigFromSecret: alertmanagerSecret !== undefined,
    }),
    // CRDs, a PVC and Grafana on fresh nodes take longer than Helm's 5 minutes.
    timeout: 900,
    cleanupOnFail: true,
    maxHistory: 5,
  }, { ...opts, dependsOn: [namespace, ...[grafanaSecret, alertmanagerSecret].filter((secret) => secret !== undefined)] });
  if (alertmanagerSecret === undefined) {
    void pulumi.log.warn(`${args.region.name}: alerts have no receiver; set the secret ${pulumi.getProject()}:alertmanagerConfig (see infra/README.md, "Alerts")`);
  }
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
      podMetricsEndpoints: [{ port: "metrics", interval: "15s", metricRelabelings: dcgmPodAttribution() }],
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
  return { kubePrometheusStack: stack };
}

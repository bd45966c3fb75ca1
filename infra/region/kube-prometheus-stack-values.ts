import type * as pulumi from "@pulumi/pulumi";
import { monitoringNames } from "./monitoring-names";

/** Prometheus's volume, GiB (standard-rwo: pd-balanced). */
export const PROMETHEUS_VOLUME_GIB = 50;

/** Inputs of {@link kubePrometheusStackValues}. */
export interface KubePrometheusStackValuesArgs {
  /** The GCP region; every series scraped in the cluster gets a `region` label with it. */
  readonly region: string;
  readonly clusterName: pulumi.Input<string>;
  readonly retention: string;
  /** Use the `grafana-admin` Secret; otherwise Grafana's chart generates a random password in-cluster. */
  readonly grafanaAdminFromSecret: boolean;
  /** Use the `alertmanager-config` Secret as Alertmanager's whole configuration. */
  readonly alertmanagerConfigFromSecret: boolean;
}

/**
 * Values for the kube-prometheus-stack chart on GKE:
 * - the chart's CRDs are upgraded with the chart (Helm itself installs CRDs once and never upgrades them);
 * - every ServiceMonitor/PodMonitor/PrometheusRule in any namespace is picked up (the chart's default only
 *   selects objects labelled with its release, which silently drops ours);
 * - Alertmanager takes its receivers from the stack's secret when there is one;
 * - a default scrape class adds `region` to every target, which the dashboards and rules group by;
 * - the control-plane scrapes GKE does not expose (controller manager, scheduler, etcd, kube-proxy, CoreDNS)
 *   are off, or they raise permanent *Down alerts;
 * - kube-state-metrics exports the GKE accelerator node label (GPU node counts on the dashboards);
 * - Grafana provisions every ConfigMap labelled `grafana_dashboard: "1"` and never keeps the chart's
 *   well-known default password.
 */
export function kubePrometheusStackValues(args: KubePrometheusStackValuesArgs): Record<string, unknown> {
  const { dashboardLabel } = monitoringNames;
  return {
    fullnameOverride: monitoringNames.kubePrometheusStack,
    crds: { enabled: true, upgradeJob: { enabled: true } },
    ...(args.alertmanagerConfigFromSecret
      ? { alertmanager: { alertmanagerSpec: { useExistingSecret: true, configSecret: monitoringNames.alertmanagerConfigSecret } } }
      : {}),
    kubeControllerManager: { enabled: false },
    kubeScheduler: { enabled: false },
    kubeEtcd: { enabled: false },
    kubeProxy: { enabled: false },
    coreDns: { enabled: false },
    // The chart's default, pinned: the monitoring NetworkPolicy admits the API server on this port only.
    prometheusOperator: { tls: { internalPort: monitoringNames.apiServerCalledPorts.operatorWebhook } },
    "kube-state-metrics": { metricLabelsAllowlist: ["nodes=[cloud.google.com/gke-accelerator]"] },
    prometheus: {
      prometheusSpec: {
        serviceMonitorSelectorNilUsesHelmValues: false,
        podMonitorSelectorNilUsesHelmValues: false,
        ruleSelectorNilUsesHelmValues: false,
        probeSelectorNilUsesHelmValues: false,
        scrapeClasses: [{
          name: "region",
          default: true,
          relabelings: [{ targetLabel: "region", replacement: args.region, action: "replace" }],
        }],
        externalLabels: { cluster: args.clusterName, region: args.region },
        retention: args.retention,
        resources: { requests: { cpu: "500m", memory: "2Gi" }, limits: { memory: "4Gi" } },
        storageSpec: {
          volumeClaimTemplate: {
            spec: { storageClassName: "standard-rwo", accessModes: ["ReadWriteOnce"], resources: { requests: { storage: `${PROMETHEUS_VOLUME_GIB}Gi` } } },
          },
        },
      },
    },
    grafana: {
      ...(args.grafanaAdminFromSecret
        ? { admin: { existingSecret: monitoringNames.grafanaAdminSecret, userKey: "admin-user", passwordKey: "admin-password" } }
        : { adminPassword: "" }),
      defaultDashboardsEnabled: true,
      sidecar: {
        dashboards: { enabled: true, label: dashboardLabel.key, labelValue: dashboardLabel.value, searchNamespace: "ALL" },
      },
    },
  };
}

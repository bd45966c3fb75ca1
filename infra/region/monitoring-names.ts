/** Names inside each cluster's monitoring namespace that several resources refer to. */
export const monitoringNames = {
  namespace: "monitoring",
  /** Helm release and `fullnameOverride` of kube-prometheus-stack: Prometheus is `kps-prometheus`, Grafana `kps-grafana`. */
  kubePrometheusStack: "kps",
  prometheusAdapter: "prometheus-adapter",
  /** Secret holding Grafana's admin login when the stack sets grafanaAdminPassword. */
  grafanaAdminSecret: "grafana-admin",
  /** Secret holding alertmanager.yaml when the stack sets alertmanagerConfig. */
  alertmanagerConfigSecret: "alertmanager-config",
  /** Labels the Prometheus operator puts on Prometheus's pods (NetworkPolicies admit its scrapes by them). */
  prometheusPodLabels: { "app.kubernetes.io/name": "prometheus" },
  /** Label Grafana's sidecar looks for on dashboard ConfigMaps. */
  dashboardLabel: { key: "grafana_dashboard", value: "1" },
} as const;

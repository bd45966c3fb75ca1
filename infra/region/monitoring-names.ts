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
  /**
   * Pod ports the API server calls in this namespace: prometheus-adapter's secure port (the custom metrics API,
   * `listenPort`) and the Prometheus operator's admission webhook (`prometheusOperator.tls.internalPort`). The
   * charts' values pin both, so the NetworkPolicy admits exactly what listens.
   */
  apiServerCalledPorts: { prometheusAdapter: 6443, operatorWebhook: 10250 },
  /** Label Grafana's sidecar looks for on dashboard ConfigMaps. */
  dashboardLabel: { key: "grafana_dashboard", value: "1" },
} as const;

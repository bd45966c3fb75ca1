/**
 * Metric relabelings that make GKE's managed DCGM exporter's series name the pod that uses the GPU in `pod` and
 * `namespace`, the labels prometheus-adapter maps to the HPA's pods.
 *
 * The exporter (namespace gke-managed-system, `app.kubernetes.io/name: gke-managed-dcgm-exporter`) attributes
 * each GPU's series to the container using it with its own `pod`, `namespace` and `container` labels. Scraped
 * without honorLabels, Prometheus keeps the target's labels (the exporter's own pod, in gke-managed-system) under
 * those names and renames the exporter's to `exported_pod`, `exported_namespace` and `exported_container`: that
 * is what kubernetes/examples (AI/vllm-deployment/hpa: gpu-service-monitor-gke.yaml scraping the GKE exporter,
 * prometheus-rule.yaml relabelling `exported_pod`/`exported_namespace`) and NVIDIA/dcgm-exporter#85 show. Relying
 * on honorLabels instead assumes the exporter sets those labels on every series, and when it does not, the
 * series name the exporter's pod, the HPA's GPU metric never matches a serving pod, and the HPA, missing one of
 * its metrics, never scales down.
 *
 * So: scrape without honorLabels, copy the attribution back where it exists, and drop the exported_* copies.
 * Series of a GPU no pod uses keep the exporter's own pod (never an inference pod). The README's "Autoscaling"
 * section has the `kubectl get --raw` check to run after the first `pulumi up`.
 */
export function dcgmPodAttribution(): Record<string, unknown>[] {
  const copy = (label: string) => ({ action: "replace", sourceLabels: [`exported_${label}`], regex: "(.+)", targetLabel: label, replacement: "$1" });
  return [copy("pod"), copy("namespace"), copy("container"), { action: "labeldrop", regex: "exported_(pod|namespace|container)" }];
}

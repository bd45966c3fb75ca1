/** What a kubeconfig for a GKE cluster needs from the cluster's outputs. */
export interface KubeconfigArgs {
  readonly clusterName: string;
  /**
   * The control plane's DNS-based endpoint (`Cluster.controlPlaneEndpointsConfig.dnsEndpointConfig.endpoint`,
   * e.g. `gke-<id>.us-central1.gke.goog`), without scheme.
   */
  readonly dnsEndpoint: string;
}

/**
 * A kubeconfig (JSON, which is valid YAML) for the cluster's DNS-based endpoint. It authenticates through
 * `gke-gcloud-auth-plugin` with the caller's Google credentials, so no token is ever stored in Pulumi state;
 * the endpoint serves a publicly trusted certificate, so there is no cluster CA to pin. The plugin must be
 * on PATH wherever `pulumi` runs (see infra/README.md).
 */
export function renderKubeconfig(args: KubeconfigArgs): string {
  const name = args.clusterName;
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name, cluster: { server: `https://${args.dnsEndpoint}` } }],
    contexts: [{ name, context: { cluster: name, user: name } }],
    "current-context": name,
    users: [{
      name,
      user: {
        exec: {
          apiVersion: "client.authentication.k8s.io/v1beta1",
          command: "gke-gcloud-auth-plugin",
          installHint: "Install gke-gcloud-auth-plugin: gcloud components install gke-gcloud-auth-plugin",
          provideClusterInfo: true,
        },
      },
    }],
  });
}

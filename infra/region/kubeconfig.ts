/** What a kubeconfig for a GKE cluster needs from the cluster's outputs. */
export interface KubeconfigArgs {
  readonly clusterName: string;
  /** The control plane's address (`Cluster.endpoint`), without scheme. */
  readonly endpoint: string;
  /** Base64 CA certificate (`Cluster.masterAuth.clusterCaCertificate`). */
  readonly caCertificate: string;
}

/**
 * A kubeconfig (JSON, which is valid YAML) that authenticates through `gke-gcloud-auth-plugin` with the
 * caller's Google credentials, so no token is ever stored in Pulumi state. The plugin must be on PATH
 * wherever `pulumi` runs (see infra/README.md).
 */
export function renderKubeconfig(args: KubeconfigArgs): string {
  const name = args.clusterName;
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name, cluster: { server: `https://${args.endpoint}`, "certificate-authority-data": args.caCertificate } }],
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

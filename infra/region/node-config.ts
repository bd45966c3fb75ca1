import type * as gcp from "@pulumi/gcp";
import type * as pulumi from "@pulumi/pulumi";

/** Settings every node of the stack shares, whatever its pool. */
export interface NodeIdentity {
  /** The stack's node service account (never the Compute Engine default one). */
  readonly serviceAccountEmail: pulumi.Input<string>;
  /** Network tag the load-balancer and control-plane firewall rules target. */
  readonly networkTag: string;
}

/**
 * The hardening every node pool (and the cluster's short-lived default pool) gets: a dedicated service
 * account with the cloud-platform scope (IAM, not scopes, limits it), the GKE metadata server for Workload
 * Identity (pods cannot read the node's credentials), and Shielded VM secure boot and integrity monitoring.
 */
export function hardenedNodeConfig(identity: NodeIdentity): gcp.types.input.container.NodePoolNodeConfig {
  return {
    serviceAccount: identity.serviceAccountEmail,
    oauthScopes: ["https://www.googleapis.com/auth/cloud-platform"],
    workloadMetadataConfig: { mode: "GKE_METADATA" },
    shieldedInstanceConfig: { enableSecureBoot: true, enableIntegrityMonitoring: true },
    imageType: "COS_CONTAINERD",
    tags: [identity.networkTag],
  };
}

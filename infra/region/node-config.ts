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

/**
 * Image streaming (with the gVNIC it needs) for both pools: the CUDA image is large, and streaming starts pods
 * before the whole image is on the node. It needs the Container File System API and, for a custom node
 * account, `roles/serviceusage.serviceUsageConsumer`; the stack grants both.
 */
export const fastImagePulls = { gcfsConfig: { enabled: true }, gvnic: { enabled: true } } as const;

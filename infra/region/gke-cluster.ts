import * as gcp from "@pulumi/gcp";
import type * as pulumi from "@pulumi/pulumi";
import { deletionPolicy } from "../deletion-policy";
import { type RegionConfig } from "../stack-config";
import { fastImagePulls, hardenedNodeConfig, type NodeIdentity } from "./node-config";
import { secondaryRangeNames } from "./regional-network";

/** Boot disk of each system-pool node, GiB (pd-balanced). */
export const SYSTEM_NODE_DISK_GIB = 50;

/** Arguments of {@link createGkeCluster}. */
export interface GkeClusterArgs {
  readonly project: string;
  readonly environment: string;
  /** The Pulumi stack, as a resource label (names are generated, so labels say whose cluster it is). */
  readonly stack: string;
  readonly region: RegionConfig;
  readonly networkId: pulumi.Input<string>;
  readonly subnetId: pulumi.Input<string>;
  readonly releaseChannel: string;
  readonly deletionProtection: boolean;
  /** Refuse deletion and replacement through Pulumi as well (production). */
  readonly protect: boolean;
  readonly nodes: NodeIdentity;
}

/** The cluster and its pool for non-GPU workloads. */
export interface GkeCluster {
  readonly cluster: gcp.container.Cluster;
  readonly systemPool: gcp.container.NodePool;
}

/**
 * A regional, VPC-native, private-node GKE Standard cluster pinned to the configured (T4) zones, on a
 * release channel (no pinned versions, so no version churn in diffs), with Workload Identity, shielded
 * nodes, Dataplane V2, the Cloud Storage FUSE CSI driver, and GKE-managed DCGM metrics (which need managed
 * Prometheus collection on). The default node pool is removed; a system pool takes everything but serving.
 *
 * The control plane has no public IP: its IP endpoint is private to the VPC, and Pulumi, CI and operators
 * reach it through the DNS-based endpoint, which Google's front end admits only with IAM credentials
 * (container.clusters.connect), from any network, with no address allowlist to keep current. GKE refuses a
 * private endpoint without master authorized networks (Error 400: "Master authorized networks must be enabled
 * if private endpoint is enabled"), so they are on, with no CIDR and no Google Cloud public IPs: nothing reaches
 * the IP endpoints from outside the VPC, and the DNS endpoint, which authorized networks do not govern, stays
 * IAM-gated (see the policy rule gke-private-endpoint-needs-authorized-networks).
 *
 * The cluster's name is generated (`<region>-cluster-<random>`), so a change that forces a replacement
 * creates the new cluster beside the old one instead of failing on a name that is still taken.
 */
export function createGkeCluster(name: string, args: GkeClusterArgs, opts: pulumi.CustomResourceOptions): GkeCluster {
  const { region } = args;
  const cluster = new gcp.container.Cluster(`${name}-cluster`, {
    project: args.project,
    location: region.name,
    nodeLocations: [...region.zones],
    network: args.networkId,
    subnetwork: args.subnetId,
    networkingMode: "VPC_NATIVE",
    ipAllocationPolicy: {
      clusterSecondaryRangeName: secondaryRangeNames.pods,
      servicesSecondaryRangeName: secondaryRangeNames.services,
    },
    // enablePrivateNodes also covers the default pool that exists for a moment at creation; the pools set the
    // per-pool field as well.
    privateClusterConfig: {
      enablePrivateNodes: true,
      enablePrivateEndpoint: true,
      masterIpv4CidrBlock: region.network.masterCidr,
    },
    // Present (the provider sends `enabled: true` whenever the block exists) with no CIDR: the API requires it
    // with enablePrivateEndpoint. The VPC itself (nodes, the private endpoint) is always admitted.
    masterAuthorizedNetworksConfig: { gcpPublicCidrsAccessEnabled: false },
    controlPlaneEndpointsConfig: { dnsEndpointConfig: { allowExternalTraffic: true } },
    releaseChannel: { channel: args.releaseChannel },
    workloadIdentityConfig: { workloadPool: `${args.project}.svc.id.goog` },
    enableShieldedNodes: true,
    deletionProtection: args.deletionProtection,
    datapathProvider: "ADVANCED_DATAPATH",
    // GKE creates the default pool before removing it; it must not run as the Compute Engine default account.
    removeDefaultNodePool: true,
    initialNodeCount: 1,
    nodeConfig: hardenedNodeConfig(args.nodes),
    addonsConfig: {
      httpLoadBalancing: { disabled: false }, // runs the NEG controller
      horizontalPodAutoscaling: { disabled: false },
      gcsFuseCsiDriverConfig: { enabled: true },
    },
    monitoringConfig: {
      enableComponents: ["SYSTEM_COMPONENTS", "DCGM"],
      managedPrometheus: { enabled: true },
    },
    loggingConfig: { enableComponents: ["SYSTEM_COMPONENTS", "WORKLOADS"] },
    resourceLabels: { environment: args.environment, stack: args.stack, "managed-by": "pulumi" },
    ...deletionPolicy(args.protect),
  }, { ...opts, ignoreChanges: ["nodeConfig", "initialNodeCount"] });

  const systemPool = new gcp.container.NodePool(`${name}-system`, {
    project: args.project,
    cluster: cluster.id,
    location: region.name,
    nodeLocations: [...region.zones],
    // Per zone, and only at creation: the autoscaler then keeps the total between min and max.
    initialNodeCount: Math.ceil(region.systemPool.minNodes / region.zones.length),
    autoscaling: {
      totalMinNodeCount: region.systemPool.minNodes,
      totalMaxNodeCount: region.systemPool.maxNodes,
      locationPolicy: "BALANCED",
    },
    management: { autoRepair: true, autoUpgrade: true },
    upgradeSettings: { maxSurge: 1, maxUnavailable: 0 },
    networkConfig: { enablePrivateNodes: true },
    nodeConfig: {
      ...hardenedNodeConfig(args.nodes),
      ...fastImagePulls,
      machineType: region.systemPool.machineType,
      diskSizeGb: SYSTEM_NODE_DISK_GIB,
      diskType: "pd-balanced",
      labels: { "inference.gke.io/pool": "system" },
    },
  }, { ...opts, ignoreChanges: ["initialNodeCount"] });
  return { cluster, systemPool };
}

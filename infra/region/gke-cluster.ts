import * as gcp from "@pulumi/gcp";
import type * as pulumi from "@pulumi/pulumi";
import { type RegionConfig } from "../stack-config";
import { hardenedNodeConfig, type NodeIdentity } from "./node-config";
import { secondaryRangeNames } from "./regional-network";

/** Arguments of {@link createGkeCluster}. */
export interface GkeClusterArgs {
  readonly project: string;
  readonly environment: string;
  readonly region: RegionConfig;
  readonly networkId: pulumi.Input<string>;
  readonly subnetId: pulumi.Input<string>;
  readonly releaseChannel: string;
  readonly deletionProtection: boolean;
  readonly masterAuthorizedNetworks: readonly { readonly cidrBlock: string; readonly displayName: string }[];
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
 */
export function createGkeCluster(name: string, args: GkeClusterArgs, opts: pulumi.CustomResourceOptions): GkeCluster {
  const { region } = args;
  const cluster = new gcp.container.Cluster(`${name}-cluster`, {
    project: args.project,
    name: region.clusterName,
    location: region.name,
    nodeLocations: [...region.zones],
    network: args.networkId,
    subnetwork: args.subnetId,
    networkingMode: "VPC_NATIVE",
    ipAllocationPolicy: {
      clusterSecondaryRangeName: secondaryRangeNames.pods,
      servicesSecondaryRangeName: secondaryRangeNames.services,
    },
    privateClusterConfig: {
      enablePrivateNodes: true,
      enablePrivateEndpoint: false,
      masterIpv4CidrBlock: region.network.masterCidr,
      masterGlobalAccessConfig: { enabled: true },
    },
    ...(args.masterAuthorizedNetworks.length > 0
      ? { masterAuthorizedNetworksConfig: { cidrBlocks: args.masterAuthorizedNetworks.map((network) => ({ ...network })) } }
      : {}),
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
    resourceLabels: { environment: args.environment, "managed-by": "pulumi" },
  }, { ...opts, ignoreChanges: ["nodeConfig", "initialNodeCount"] });

  const systemPool = new gcp.container.NodePool(`${name}-system`, {
    project: args.project,
    cluster: cluster.id,
    location: region.name,
    nodeLocations: [...region.zones],
    initialNodeCount: region.systemPool.minNodes,
    autoscaling: {
      minNodeCount: region.systemPool.minNodes,
      maxNodeCount: region.systemPool.maxNodes,
      locationPolicy: "BALANCED",
    },
    management: { autoRepair: true, autoUpgrade: true },
    upgradeSettings: { maxSurge: 1, maxUnavailable: 0 },
    nodeConfig: {
      ...hardenedNodeConfig(args.nodes),
      machineType: region.systemPool.machineType,
      diskSizeGb: 50,
      diskType: "pd-balanced",
      labels: { "inference.gke.io/pool": "system" },
    },
  }, { ...opts, ignoreChanges: ["initialNodeCount"] });
  return { cluster, systemPool };
}

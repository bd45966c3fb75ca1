import * as gcp from "@pulumi/gcp";
import type * as pulumi from "@pulumi/pulumi";
import { type RegionConfig } from "../stack-config";
import { fastImagePulls, hardenedNodeConfig, type NodeIdentity } from "./node-config";

/** The accelerator type of the pool. */
export const T4_ACCELERATOR = "nvidia-tesla-t4";

/** The taint that keeps everything but GPU workloads off GPU nodes (pods requesting nvidia.com/gpu tolerate it). */
export const GPU_TAINT = { key: "nvidia.com/gpu", value: "present", effect: "NO_SCHEDULE" } as const;

/** Boot disk of each GPU node, GiB (pd-balanced). */
export const GPU_NODE_DISK_GIB = 100;

/** Arguments of {@link createGpuNodePool}. */
export interface GpuNodePoolArgs {
  readonly project: string;
  readonly region: RegionConfig;
  readonly clusterId: pulumi.Input<string>;
  readonly gpusPerNode: number;
  readonly nodes: NodeIdentity;
}

/**
 * The T4 pool: N1 nodes with `gpusPerNode` T4s and GKE-installed drivers, autoscaled between the region's
 * total min and max. It is created empty, so a T4 stockout in a zone cannot fail the create: the autoscaler
 * adds nodes as serving pods ask for GPUs (locationPolicy ANY takes whichever listed zone has T4s, BALANCED
 * spreads them). The taint is set here, not left to GKE, which adds it only when another pool exists at
 * the time (a race with removeDefaultNodePool).
 */
export function createGpuNodePool(name: string, args: GpuNodePoolArgs, opts: pulumi.CustomResourceOptions): gcp.container.NodePool {
  const { region } = args;
  return new gcp.container.NodePool(`${name}-gpu`, {
    project: args.project,
    cluster: args.clusterId,
    location: region.name,
    nodeLocations: [...region.zones],
    initialNodeCount: 0,
    autoscaling: {
      totalMinNodeCount: region.gpuPool.minNodes,
      totalMaxNodeCount: region.gpuPool.maxNodes,
      locationPolicy: region.gpuPool.locationPolicy,
    },
    management: { autoRepair: true, autoUpgrade: true },
    // A surge node needs T4 quota; one at a time keeps serving capacity during upgrades.
    upgradeSettings: { maxSurge: 1, maxUnavailable: 0 },
    networkConfig: { enablePrivateNodes: true },
    nodeConfig: {
      ...hardenedNodeConfig(args.nodes),
      ...fastImagePulls,
      machineType: region.gpuPool.machineType,
      guestAccelerators: [{
        type: T4_ACCELERATOR,
        count: args.gpusPerNode,
        gpuDriverInstallationConfig: { gpuDriverVersion: "DEFAULT" },
      }],
      taints: [{ ...GPU_TAINT }],
      spot: region.gpuPool.spot,
      diskSizeGb: GPU_NODE_DISK_GIB,
      diskType: "pd-balanced",
      labels: { "inference.gke.io/pool": "gpu" },
    },
  }, { ...opts, ignoreChanges: ["initialNodeCount"] });
}

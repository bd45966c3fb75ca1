import * as gcp from "@pulumi/gcp";
import type * as pulumi from "@pulumi/pulumi";
import { type RegionConfig } from "../stack-config";
import { fastImagePulls, hardenedNodeConfig, type NodeIdentity } from "./node-config";

/** The accelerator type of the pool. */
export const T4_ACCELERATOR = "nvidia-tesla-t4";

/** The taint that keeps everything but GPU workloads off GPU nodes (pods requesting nvidia.com/gpu tolerate it). */
export const GPU_TAINT = { key: "nvidia.com/gpu", value: "present", effect: "NO_SCHEDULE" } as const;

/**
 * The driver GKE installs on T4 nodes. The server image is CUDA 12.6 (server/Dockerfile.cuda), which needs an R560
 * or newer driver for its full feature set (CUDA minor-version compatibility lets 12.x run on R525+, but not
 * PTX JIT). GKE's DEFAULT is the oldest supported branch of the node version (R535 on GKE 1.30-1.31); LATEST
 * follows the newest branch GKE ships for the version and exists on Container-Optimized OS only, which every
 * pool here runs (policy rule gke-latest-gpu-driver-needs-cos). infra/README.md says how to confirm the driver
 * on the first node.
 */
export const GPU_DRIVER_VERSION = "LATEST";

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
        gpuDriverInstallationConfig: { gpuDriverVersion: GPU_DRIVER_VERSION },
      }],
      taints: [{ ...GPU_TAINT }],
      spot: region.gpuPool.spot,
      diskSizeGb: GPU_NODE_DISK_GIB,
      diskType: "pd-balanced",
      labels: { "inference.gke.io/pool": "gpu" },
    },
  }, { ...opts, ignoreChanges: ["initialNodeCount"] });
}

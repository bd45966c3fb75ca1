import * as gcp from "@pulumi/gcp";
import type * as pulumi from "@pulumi/pulumi";
import { type RegionConfig } from "../stack-config";

/** Names of the subnet's secondary ranges, which the cluster's IP allocation policy refers to. */
export const secondaryRangeNames = { pods: "pods", services: "services" } as const;

/** Ports on the nodes the GKE control plane must reach beyond GKE's own rule (443, 10250). */
const controlPlaneToNodePorts = [
  "6443", // prometheus-adapter: the custom metrics API the HPA reads is an aggregated API served from a pod
];

/** Arguments of {@link createRegionalNetwork}. */
export interface RegionalNetworkArgs {
  readonly project: string;
  readonly region: RegionConfig;
  readonly networkId: pulumi.Input<string>;
  readonly nodeTag: string;
  /** Fraction of flows the subnet logs (0: flow logs off). */
  readonly flowLogSampleRate: number;
}

/** The region's share of the VPC. */
export interface RegionalNetwork {
  readonly subnet: gcp.compute.Subnetwork;
}

/**
 * The region's subnet (nodes; pods and services as secondary ranges for a VPC-native cluster, which
 * standalone NEGs require), Private Google Access for Artifact Registry and Cloud Storage, and Cloud NAT
 * so that private nodes can pull public images and Helm charts. Nodes get no external IPs.
 */
export function createRegionalNetwork(name: string, args: RegionalNetworkArgs, opts: pulumi.CustomResourceOptions): RegionalNetwork {
  const { region } = args;
  const subnet = new gcp.compute.Subnetwork(`${name}-subnet`, {
    project: args.project,
    region: region.name,
    network: args.networkId,
    ipCidrRange: region.network.subnetCidr,
    secondaryIpRanges: [
      { rangeName: secondaryRangeNames.pods, ipCidrRange: region.network.podsCidr },
      { rangeName: secondaryRangeNames.services, ipCidrRange: region.network.servicesCidr },
    ],
    privateIpGoogleAccess: true,
    ...(args.flowLogSampleRate > 0
      ? { logConfig: { aggregationInterval: "INTERVAL_5_MIN", flowSampling: args.flowLogSampleRate, metadata: "EXCLUDE_ALL_METADATA" } }
      : {}),
  }, opts);
  const router = new gcp.compute.Router(`${name}-router`, {
    project: args.project,
    region: region.name,
    network: args.networkId,
  }, opts);
  new gcp.compute.RouterNat(`${name}-nat`, {
    project: args.project,
    region: region.name,
    router: router.name,
    natIpAllocateOption: "AUTO_ONLY",
    sourceSubnetworkIpRangesToNat: "LIST_OF_SUBNETWORKS",
    subnetworks: [{ name: subnet.id, sourceIpRangesToNats: ["ALL_IP_RANGES"] }],
    logConfig: { enable: true, filter: "ERRORS_ONLY" },
  }, opts);
  new gcp.compute.Firewall(`${name}-allow-control-plane`, {
    project: args.project,
    network: args.networkId,
    description: `GKE control plane in ${region.name} to the aggregated API servers on its nodes`,
    direction: "INGRESS",
    sourceRanges: [region.network.masterCidr],
    targetTags: [args.nodeTag],
    allows: [{ protocol: "tcp", ports: controlPlaneToNodePorts }],
  }, opts);
  return { subnet };
}

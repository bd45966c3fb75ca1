import * as gcp from "@pulumi/gcp";
import * as pulumi from "@pulumi/pulumi";
import { inferenceServer } from "../inference-server";
import { googleLoadBalancerRanges } from "../google-load-balancer-ranges";

/** Arguments of {@link Vpc}. */
export interface VpcArgs {
  readonly project: string;
  /** Network tag every GKE node carries; the firewall admits load-balancer traffic to these nodes only. */
  readonly nodeTag: string;
  /** Log every connection the rule admits: mostly health-check probes, billed per GiB; off unless debugging. */
  readonly firewallLogging: boolean;
}

/**
 * The one global VPC (GCP networks are global; each region adds its own subnet) and the firewall rule
 * that lets the global load balancer and its health checks reach the serving pods. Nothing else is
 * opened: there is no rule from 0.0.0.0/0, and GKE adds its own cluster-internal rules.
 */
export class Vpc extends pulumi.ComponentResource {
  readonly network: gcp.compute.Network;
  readonly loadBalancerFirewall: gcp.compute.Firewall;

  constructor(name: string, args: VpcArgs, opts?: pulumi.ComponentResourceOptions) {
    super("gpu-inference:global:Vpc", name, {}, opts);
    this.network = new gcp.compute.Network(`${name}-network`, {
      project: args.project,
      autoCreateSubnetworks: false,
      routingMode: "GLOBAL",
    }, { parent: this });
    this.loadBalancerFirewall = new gcp.compute.Firewall(`${name}-allow-load-balancer`, {
      project: args.project,
      network: this.network.id,
      description: "Google health checks and load balancer proxies to the inference server's HTTP and gRPC ports (NEG endpoints are pod IPs)",
      direction: "INGRESS",
      priority: 1000,
      sourceRanges: [...googleLoadBalancerRanges],
      targetTags: [args.nodeTag],
      allows: [{ protocol: "tcp", ports: [String(inferenceServer.ports.http), String(inferenceServer.ports.grpc)] }],
      ...(args.firewallLogging ? { logConfig: { metadata: "INCLUDE_ALL_METADATA" } } : {}),
    }, { parent: this });
    this.registerOutputs({ network: this.network.id });
  }
}

import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { inferenceServer } from "../inference-server";
import { type MonitoringAssets } from "../monitoring-assets";
import { type RegionConfig, type StackConfig } from "../stack-config";
import { createGkeCluster } from "./gke-cluster";
import { createGpuNodePool } from "./gpu-node-pool";
import { createInferenceWorkload } from "./inference-workload";
import { renderKubeconfig } from "./kubeconfig";
import { createMonitoringStack } from "./monitoring-stack";
import { monitoringNames } from "./monitoring-names";
import { createRegionalNetwork } from "./regional-network";

/** Arguments of {@link Region}: the region's config plus what the global layer created for all regions. */
export interface RegionArgs {
  readonly region: RegionConfig;
  readonly stack: Pick<StackConfig, "project" | "environment" | "gpusPerNode" | "cluster" | "server" | "autoscaling" | "monitoring" | "grafanaAdminPassword">;
  readonly networkId: pulumi.Input<string>;
  readonly nodeTag: string;
  readonly nodeServiceAccountEmail: pulumi.Input<string>;
  readonly serverServiceAccountEmail: pulumi.Input<string>;
  /** Digest-qualified server image. */
  readonly image: pulumi.Input<string>;
  readonly modelBucketName: pulumi.Input<string>;
  readonly monitoringAssets: MonitoringAssets;
}

/**
 * Everything one region runs: subnet and NAT, a private GKE cluster with a system pool and a T4 pool, a
 * Kubernetes provider for it, the inference workload and its monitoring. Outputs what the global load
 * balancer needs (the NEGs and the Service that owns them) and what operators need (names, commands).
 */
export class Region extends pulumi.ComponentResource {
  /** The GCP region, e.g. us-central1. */
  readonly regionName: string;
  readonly clusterName: pulumi.Output<string>;
  /** The GKE cluster resource; the Workload Identity pool exists once one does. */
  readonly cluster: pulumi.Resource;
  readonly httpNegs: pulumi.Output<string>[];
  readonly grpcNegs: pulumi.Output<string>[];
  /** The Service whose annotation owns this region's NEGs. */
  readonly negOwner: pulumi.Resource;
  /** How to reach this cluster's Grafana (a port-forward; nothing monitoring-related is exposed publicly). */
  readonly grafanaAccess: pulumi.Output<string>;

  constructor(name: string, args: RegionArgs, opts?: pulumi.ComponentResourceOptions) {
    super("gpu-inference:region:Region", name, {}, opts);
    const { region, stack } = args;
    const child = { parent: this };
    const nodes = { serviceAccountEmail: args.nodeServiceAccountEmail, networkTag: args.nodeTag };
    const { subnet } = createRegionalNetwork(name, { project: stack.project, region, networkId: args.networkId, nodeTag: args.nodeTag }, child);
    const { cluster, systemPool } = createGkeCluster(name, {
      project: stack.project,
      environment: stack.environment,
      region,
      networkId: args.networkId,
      subnetId: subnet.id,
      releaseChannel: stack.cluster.releaseChannel,
      deletionProtection: stack.cluster.deletionProtection,
      masterAuthorizedNetworks: stack.cluster.masterAuthorizedNetworks,
      nodes,
    }, child);
    const gpuPool = createGpuNodePool(name, { project: stack.project, region, clusterId: cluster.id, gpusPerNode: stack.gpusPerNode, nodes }, child);
    const kubeconfig = pulumi.all([cluster.name, cluster.endpoint, cluster.masterAuth]).apply(([clusterName, endpoint, masterAuth]) =>
      renderKubeconfig({ clusterName, endpoint, caCertificate: masterAuth.clusterCaCertificate ?? "" }));
    const provider = new k8s.Provider(`${name}-kubernetes`, {
      kubeconfig,
      enableServerSideApply: true,
      // Lets `pulumi destroy` finish when the cluster is already gone.
      deleteUnreachable: true,
    }, { parent: this, dependsOn: [systemPool, gpuPool] });
    const inCluster = { parent: this, provider };
    const workload = createInferenceWorkload(name, {
      project: stack.project,
      region,
      image: args.image,
      modelBucketName: args.modelBucketName,
      serverServiceAccountEmail: args.serverServiceAccountEmail,
      server: stack.server,
      autoscaling: stack.autoscaling,
    }, inCluster);
    createMonitoringStack(name, {
      region,
      monitoring: stack.monitoring,
      ...(stack.grafanaAdminPassword === undefined ? {} : { grafanaAdminPassword: stack.grafanaAdminPassword }),
      assets: args.monitoringAssets,
    }, inCluster);

    this.regionName = region.name;
    this.cluster = cluster;
    this.clusterName = cluster.name;
    this.httpNegs = workload.httpNegs;
    this.grpcNegs = workload.grpcNegs;
    this.negOwner = workload.service;
    this.grafanaAccess = pulumi.interpolate`gcloud container clusters get-credentials ${cluster.name} --region ${region.name} --project ${stack.project} && kubectl -n ${monitoringNames.namespace} port-forward svc/${monitoringNames.kubePrometheusStack}-grafana 3000:80  # then open http://localhost:3000`;
    this.registerOutputs({
      clusterName: this.clusterName,
      httpNegs: this.httpNegs,
      grpcNegs: this.grpcNegs,
      grafanaAccess: this.grafanaAccess,
      servingNamespace: inferenceServer.kubernetes.namespace,
    });
  }
}

import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { type MonitoringAssets } from "../monitoring-assets";
import { type RegionConfig, type StackConfig } from "../stack-config";
import { createGkeCluster } from "./gke-cluster";
import { createGpuNodePool } from "./gpu-node-pool";
import { createInferenceWorkload } from "./inference-workload";
import { renderKubeconfig } from "./kubeconfig";
import { createLoadTest } from "./load-test";
import { createMonitoringStack } from "./monitoring-stack";
import { monitoringNames } from "./monitoring-names";
import { createRegionalNetwork } from "./regional-network";
import { type RegionNegs } from "./standalone-negs";

/** Arguments of {@link Region}: the region's config plus what the global layer created for all regions. */
export interface RegionArgs {
  readonly region: RegionConfig;
  readonly stack: Pick<StackConfig, "project" | "stack" | "environment" | "gpusPerNode" | "cluster" | "protectResources" | "vpc">;
  readonly networkId: pulumi.Input<string>;
  readonly nodeTag: string;
  readonly nodeServiceAccountEmail: pulumi.Input<string>;
}

/** What the serving part of a region needs beyond the cluster: the workload's settings and global resources. */
export interface RegionServingArgs {
  readonly stack: Pick<StackConfig, "project" | "server" | "autoscaling" | "monitoring" | "grafanaAdminPassword" | "alertmanagerConfig" | "loadTest" | "loadBalancer">;
  readonly serverServiceAccountEmail: pulumi.Input<string>;
  /** This region's Workload Identity binding; it exists only once the cluster does, hence the two steps. */
  readonly serverIdentity: pulumi.Resource;
  /** Digest-qualified server image. */
  readonly image: pulumi.Input<string>;
  readonly modelBucketName: pulumi.Input<string>;
  readonly adminKey: pulumi.Input<string>;
  readonly monitoringAssets: MonitoringAssets;
}

/** What the global load balancer needs from a region. */
export interface RegionServing {
  /** The standalone NEGs GKE has created for the region's Service. */
  readonly negs: pulumi.Output<RegionNegs>;
  /** The Service whose annotation owns the NEGs; backend services depend on it so `pulumi destroy` detaches them first. */
  readonly negOwner: pulumi.Resource;
}

/**
 * One region, in two steps. The constructor builds the infrastructure: subnet and NAT, a private GKE cluster
 * with a system pool and a T4 pool, and a Kubernetes provider for it. {@link Region.serve} then deploys the
 * inference workload, its monitoring and the optional load test into the cluster, once the caller has made
 * the Workload Identity binding (which needs a cluster to exist first).
 */
export class Region extends pulumi.ComponentResource {
  /** The GCP region, e.g. us-central1. */
  readonly regionName: string;
  readonly clusterName: pulumi.Output<string>;
  /** The GKE cluster resource; the Workload Identity pool exists once one does. */
  readonly cluster: pulumi.Resource;
  /** How to reach this cluster's Grafana (a port-forward; nothing monitoring-related is exposed publicly). */
  readonly grafanaAccess: pulumi.Output<string>;
  readonly #config: RegionConfig;
  readonly #provider: k8s.Provider;
  readonly #gpuPool: pulumi.Resource;

  constructor(name: string, args: RegionArgs, opts?: pulumi.ComponentResourceOptions) {
    super("gpu-inference:region:Region", name, {}, opts);
    const { region, stack } = args;
    const child = { parent: this };
    const nodes = { serviceAccountEmail: args.nodeServiceAccountEmail, networkTag: args.nodeTag };
    const { subnet } = createRegionalNetwork(name, {
      project: stack.project, region, networkId: args.networkId, nodeTag: args.nodeTag, flowLogSampleRate: stack.vpc.flowLogSampleRate,
    }, child);
    const { cluster, systemPool } = createGkeCluster(name, {
      project: stack.project,
      environment: stack.environment,
      stack: stack.stack,
      region,
      networkId: args.networkId,
      subnetId: subnet.id,
      releaseChannel: stack.cluster.releaseChannel,
      deletionProtection: stack.cluster.deletionProtection,
      protect: stack.protectResources,
      nodes,
    }, child);
    this.#gpuPool = createGpuNodePool(name, { project: stack.project, region, clusterId: cluster.id, gpusPerNode: stack.gpusPerNode, nodes }, child);
    const kubeconfig = pulumi.all([cluster.name, cluster.controlPlaneEndpointsConfig]).apply(([clusterName, endpoints]) => {
      const dnsEndpoint = endpoints.dnsEndpointConfig?.endpoint;
      if (dnsEndpoint === undefined) throw new pulumi.ResourceError(`cluster ${clusterName} reports no DNS-based control-plane endpoint`, this);
      return renderKubeconfig({ clusterName, dnsEndpoint });
    });
    // The system pool only: Helm releases and the Deployment's object need a node to run on, never a GPU
    // node (a T4 stockout must not hold the cluster's Kubernetes objects back).
    this.#provider = new k8s.Provider(`${name}-kubernetes`, { kubeconfig, enableServerSideApply: true }, { parent: this, dependsOn: [systemPool] });

    this.#config = region;
    this.regionName = region.name;
    this.cluster = cluster;
    this.clusterName = cluster.name;
    this.grafanaAccess = pulumi.interpolate`gcloud container clusters get-credentials ${cluster.name} --region ${region.name} --project ${stack.project} --dns-endpoint && kubectl -n ${monitoringNames.namespace} port-forward svc/${monitoringNames.kubePrometheusStack}-grafana 3000:80  # then open http://localhost:3000`;
    this.registerOutputs({ clusterName: this.clusterName, grafanaAccess: this.grafanaAccess });
  }

  /** Deploys the serving workload, its monitoring and the load test into this region's cluster. */
  serve(args: RegionServingArgs): RegionServing {
    const name = this.regionName;
    const { stack } = args;
    const inCluster = { parent: this, provider: this.#provider };
    const workload = createInferenceWorkload(name, {
      project: stack.project,
      region: this.#config,
      clusterName: this.clusterName,
      image: args.image,
      modelBucketName: args.modelBucketName,
      serverServiceAccountEmail: args.serverServiceAccountEmail,
      serverIdentity: args.serverIdentity,
      gpuPool: this.#gpuPool,
      adminKey: args.adminKey,
      server: stack.server,
      autoscaling: stack.autoscaling,
      negWait: stack.loadBalancer.negWait,
    }, inCluster);
    const monitoring = createMonitoringStack(name, {
      region: this.#config,
      clusterName: this.clusterName,
      monitoring: stack.monitoring,
      grafanaAdminPassword: stack.grafanaAdminPassword,
      alertmanagerConfig: stack.alertmanagerConfig,
      assets: args.monitoringAssets,
    }, inCluster);
    if (stack.loadTest.enabled) {
      createLoadTest(name, {
        loadTest: stack.loadTest,
        image: args.image,
        adminKeySecret: workload.adminKeySecret,
        deployment: workload.deployment,
        monitoring: monitoring.kubePrometheusStack,
      }, inCluster);
    }
    return { negs: workload.negs, negOwner: workload.service };
  }
}

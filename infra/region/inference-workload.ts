import { createHash } from "node:crypto";
import * as gcp from "@pulumi/gcp";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { autoscalingMetrics } from "../autoscaling-metrics";
import { googleLoadBalancerRanges } from "../google-load-balancer-ranges";
import { inferenceServer, restrictedApiFlagValue, serverServiceAccountName } from "../inference-server";
import { servingRollout } from "../rollout";
import { type RegionConfig, type StackConfig } from "../stack-config";
import { GPU_TAINT, T4_ACCELERATOR } from "./gpu-node-pool";
import { monitoringNames } from "./monitoring-names";
import { addressesIn, allowIngress, denyAllIngress, podsIn, tcp } from "./network-policies";
import { podSecurityLabels, restrictedContainerSecurityContext, scratchVolume } from "./pod-security";
import {
  describeMissingNegs, findStandaloneNegs, isNotFoundError, MISSING_NEG_HINT, type NegLookup, type NegWaitSettings, type RegionNegs,
} from "./standalone-negs";

/** Arguments of {@link createInferenceWorkload}. */
export interface InferenceWorkloadArgs {
  readonly project: string;
  readonly region: RegionConfig;
  /** The GKE cluster's (generated) name: the NEG names derive from it, so a replacement cluster gets new ones. */
  readonly clusterName: pulumi.Input<string>;
  /** Digest-qualified image reference. */
  readonly image: pulumi.Input<string>;
  readonly modelBucketName: pulumi.Input<string>;
  /** The Google service account the pods act as (Workload Identity), which may read the bucket. */
  readonly serverServiceAccountEmail: pulumi.Input<string>;
  /**
   * The IAM binding that lets the pods' Kubernetes service account act as that Google account. The Deployment
   * waits for it: a pod that starts first cannot mount the bucket and fails its start-up.
   */
  readonly serverIdentity: pulumi.Input<pulumi.Resource>;
  /**
   * The region's T4 pool: the Deployment waits for it, so a pool that could not be created fails this region's
   * workload at once instead of after the Deployment's 30 minute timeout.
   */
  readonly gpuPool: pulumi.Resource;
  /** The key the restricted APIs require (the `admin-key` header). */
  readonly adminKey: pulumi.Input<string>;
  readonly server: StackConfig["server"];
  readonly autoscaling: StackConfig["autoscaling"];
  readonly negWait: NegWaitSettings;
}

/** The serving side of one cluster, and the NEGs GKE made for it. */
export interface InferenceWorkload {
  readonly service: k8s.core.v1.Service;
  readonly deployment: k8s.apps.v1.Deployment;
  /** The Secret holding the restricted APIs' key (the load test reads it too). */
  readonly adminKeySecret: k8s.core.v1.Secret;
  /** The standalone NEGs that exist once the Service does (see {@link findStandaloneNegs}). */
  readonly negs: pulumi.Output<RegionNegs>;
}

// Long enough for the LB to stop sending (2 failed checks x 5 s) and for in-flight requests to finish.
const PRE_STOP_SLEEP_SECONDS = 15;
// preStop + the server's own drain (--exit-timeout-secs, 30 s) must fit inside the grace period.
const TERMINATION_GRACE_SECONDS = 60;

/**
 * The Service annotation that makes GKE create standalone NEGs with fixed names for the load balancer. `zones`
 * asks GKE to pre-provision (empty) NEGs in every configured zone, so zones without a serving pod yet are
 * attached from the first `pulumi up`; a NEG controller that predates the field ignores it and creates NEGs
 * where pods run.
 */
function negAnnotation(negNames: { readonly http: string; readonly grpc: string }, zones: readonly string[]): string {
  return JSON.stringify({
    exposed_ports: {
      [String(inferenceServer.ports.http)]: { name: negNames.http },
      [String(inferenceServer.ports.grpc)]: { name: negNames.grpc },
    },
    zones,
  });
}

/** The environment entry that hands a container the restricted APIs' key from its Secret (the server and the load test). */
export function adminKeyEnv(adminKeySecret: k8s.core.v1.Secret): k8s.types.input.core.v1.EnvVar {
  const { environmentVariable, secret } = inferenceServer.restrictedApis;
  return { name: environmentVariable, valueFrom: { secretKeyRef: { name: adminKeySecret.metadata.name, key: secret.key } } };
}

/** Labels of the load test's pods: the server admits them (NetworkPolicy). */
export const loadTestPodLabels = { "app.kubernetes.io/name": "inference-load-test" } as const;

/** Where the CUDA runtime keeps its JIT cache: the default (~/.nv) is on the read-only root filesystem. */
const CUDA_CACHE_PATH = `${scratchVolume.mount.mountPath}/cuda-cache`;

function serverContainer(args: InferenceWorkloadArgs, adminKeySecret: k8s.core.v1.Secret): k8s.types.input.core.v1.Container {
  const { ports, health } = inferenceServer;
  const httpGet = (path: string) => ({ path, port: "http" });
  return {
    name: "inference-server",
    image: args.image,
    args: [
      "--model-repository", inferenceServer.modelRepositoryMountPath,
      "--http-port", String(ports.http),
      "--grpc-port", String(ports.grpc),
      "--metrics-port", String(ports.metrics),
      "--strict-readiness", "true",
      "--exit-on-error", "false",
      "--log-verbose", String(args.server.logVerbose),
      `--http-restricted-api=${restrictedApiFlagValue()}`,
      `--grpc-restricted-protocol=${restrictedApiFlagValue()}`,
    ],
    env: [adminKeyEnv(adminKeySecret), { name: "CUDA_CACHE_PATH", value: CUDA_CACHE_PATH }],
    ports: [
      { name: "http", containerPort: ports.http },
      { name: "grpc", containerPort: ports.grpc },
      { name: "metrics", containerPort: ports.metrics },
    ],
    resources: {
      requests: { cpu: args.server.cpuRequest, memory: args.server.memory, "nvidia.com/gpu": "1" },
      limits: { memory: args.server.memory, "nvidia.com/gpu": "1" },
    },
    // Models load before the server turns ready; 30 x 10 s gives a cold node 5 min without restart loops.
    startupProbe: { httpGet: httpGet(health.readyPath), periodSeconds: 10, failureThreshold: 30 },
    readinessProbe: { httpGet: httpGet(health.readyPath), periodSeconds: 5, failureThreshold: 3, timeoutSeconds: 2 },
    livenessProbe: { httpGet: httpGet(health.livePath), periodSeconds: 10, failureThreshold: 3, timeoutSeconds: 2 },
    lifecycle: { preStop: { exec: { command: ["sleep", String(PRE_STOP_SLEEP_SECONDS)] } } },
    volumeMounts: [{ name: "model-repository", mountPath: inferenceServer.modelRepositoryMountPath, readOnly: true }, scratchVolume.mount],
    securityContext: restrictedContainerSecurityContext,
  };
}

/** A NEG lookup through the provider (Compute API `networkEndpointGroups.get`): 404 means "not yet". */
function computeApiNegLookup(project: string, parent: pulumi.Resource): NegLookup {
  return async (zone, name) => {
    try {
      const neg = await gcp.compute.getNetworkEndpointGroup({ project, zone, name }, { parent });
      if (neg.selfLink === undefined) throw new pulumi.ResourceError(`NEG ${name} in ${zone} has no self-link`, parent);
      return neg.selfLink;
    } catch (error) {
      if (isNotFoundError(error)) return undefined;
      throw error;
    }
  };
}

/**
 * The region's NEGs once its Service exists. `pulumi up` polls until GKE has created them (bounded by
 * `negWait`); `pulumi preview` looks once and never fails on a NEG that does not exist yet (a new zone or
 * region). Zones still missing are reported as a warning; the load balancer attaches the rest.
 */
function standaloneNegs(args: InferenceWorkloadArgs, service: k8s.core.v1.Service, negNames: pulumi.Output<{ http: string; grpc: string }>, parent: pulumi.Resource): pulumi.Output<RegionNegs> {
  const { namespace, name } = inferenceServer.kubernetes;
  const lookUp = computeApiNegLookup(args.project, parent);
  return pulumi.all([service.metadata.uid, negNames]).apply(async ([, names]) => {
    const preview = pulumi.runtime.isDryRun();
    const negs = await findStandaloneNegs({
      region: args.region.name,
      zones: args.region.zones,
      service: `${namespace}/${name}`,
      negNames: names,
      lookUp,
      wait: preview ? false : args.negWait,
    });
    if (negs.missingZones.length > 0) {
      const message = `${describeMissingNegs(negs)}; the load balancer uses ${negs.zones.length === 0 ? "no zone of this region" : `zones ${negs.zones.join(", ")}`}`;
      if (preview) void pulumi.log.info(`${message} (GKE creates the NEGs during \`pulumi up\`)`, parent);
      else void pulumi.log.warn(`${message}. ${MISSING_NEG_HINT}`, parent);
    }
    return negs;
  });
}

/**
 * The inference server in one cluster: its namespace and Workload Identity service account, the Secret with
 * the restricted APIs' key, a Deployment with one T4 per pod and the model bucket mounted read-only through
 * Cloud Storage FUSE, a Service whose annotation makes GKE create the standalone NEGs (named after the cluster)
 * the global load balancer uses, a PDB, and an HPA on queue time per request and GPU utilization (both served
 * by prometheus-adapter).
 *
 * The NEGs are looked up once the Service exists, not after the Deployment is ready: a region whose GPUs cannot
 * start (a stockout) then still lets the load balancer attach every other region.
 */
export function createInferenceWorkload(name: string, args: InferenceWorkloadArgs, opts: pulumi.CustomResourceOptions): InferenceWorkload {
  const { namespace: namespaceName, name: appName } = inferenceServer.kubernetes;
  const { restrictedApis } = inferenceServer;
  const labels = { "app.kubernetes.io/name": appName };
  // Restricted Pod Security: the server, the load test and GKE's Cloud Storage FUSE sidecar all comply.
  const namespace = new k8s.core.v1.Namespace(`${name}-namespace`, { metadata: { name: namespaceName, labels: podSecurityLabels("restricted") } }, opts);
  const inNamespace = { ...opts, dependsOn: [namespace] };
  const serviceAccount = new k8s.core.v1.ServiceAccount(`${name}-service-account`, {
    metadata: {
      name: serverServiceAccountName(args.region.name),
      namespace: namespaceName,
      annotations: { "iam.gke.io/gcp-service-account": args.serverServiceAccountEmail },
    },
  }, inNamespace);
  const adminKeySecret = new k8s.core.v1.Secret(`${name}-admin-key`, {
    metadata: { name: restrictedApis.secret.name, namespace: namespaceName },
    stringData: { [restrictedApis.secret.key]: args.adminKey },
  }, inNamespace);
  // The server reads the key at start-up: a new key must roll the pods.
  const adminKeyDigest = pulumi.secret(pulumi.output(args.adminKey).apply((key) => createHash("sha256").update(key).digest("hex")));
  const deployment = new k8s.apps.v1.Deployment(`${name}-deployment`, {
    metadata: { name: appName, namespace: namespaceName, labels },
    spec: {
      // No `replicas`: the HPA owns the count, and Pulumi would otherwise reset it on every update.
      selector: { matchLabels: labels },
      strategy: { type: "RollingUpdate", rollingUpdate: { ...servingRollout } },
      template: {
        metadata: { labels, annotations: { "gke-gcsfuse/volumes": "true", "inference.gke.io/admin-key-sha256": adminKeyDigest } },
        spec: {
          serviceAccountName: serviceAccount.metadata.name,
          securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
          terminationGracePeriodSeconds: TERMINATION_GRACE_SECONDS,
          nodeSelector: { "cloud.google.com/gke-accelerator": T4_ACCELERATOR },
          tolerations: [{ key: GPU_TAINT.key, operator: "Exists", effect: "NoSchedule" }],
          topologySpreadConstraints: [{
            maxSkew: 1,
            topologyKey: "topology.kubernetes.io/zone",
            whenUnsatisfiable: "ScheduleAnyway",
            labelSelector: { matchLabels: labels },
          }],
          containers: [serverContainer(args, adminKeySecret)],
          volumes: [{
            name: "model-repository",
            csi: {
              driver: "gcsfuse.csi.storage.gke.io",
              readOnly: true,
              volumeAttributes: { bucketName: args.modelBucketName, mountOptions: "implicit-dirs" },
            },
          }, scratchVolume.volume],
        },
      },
    },
  }, { ...opts, dependsOn: [namespace, args.serverIdentity, args.gpuPool], customTimeouts: { create: "30m", update: "30m" } });
  const negNames = pulumi.output(args.clusterName).apply((clusterName) => ({ http: `${clusterName}-http`, grpc: `${clusterName}-grpc` }));
  const service = new k8s.core.v1.Service(`${name}-service`, {
    metadata: {
      name: appName,
      namespace: namespaceName,
      labels,
      annotations: { "cloud.google.com/neg": negNames.apply((names) => negAnnotation(names, args.region.zones)) },
    },
    spec: {
      type: "ClusterIP",
      selector: labels,
      ports: [
        { name: "http", port: inferenceServer.ports.http, targetPort: "http" },
        { name: "grpc", port: inferenceServer.ports.grpc, targetPort: "grpc", appProtocol: "kubernetes.io/h2c" },
        { name: "metrics", port: inferenceServer.ports.metrics, targetPort: "metrics" },
      ],
    },
  }, inNamespace);
  new k8s.policy.v1.PodDisruptionBudget(`${name}-pdb`, {
    metadata: { name: appName, namespace: namespaceName },
    spec: { maxUnavailable: 1, selector: { matchLabels: labels } },
  }, inNamespace);
  const podsMetric = (metricName: string, averageValue: number) => ({
    type: "Pods",
    pods: { metric: { name: metricName }, target: { type: "AverageValue", averageValue: String(averageValue) } },
  });
  new k8s.autoscaling.v2.HorizontalPodAutoscaler(`${name}-hpa`, {
    metadata: { name: appName, namespace: namespaceName },
    spec: {
      scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: deployment.metadata.name },
      minReplicas: args.autoscaling.minReplicas,
      maxReplicas: args.autoscaling.maxReplicas,
      metrics: [
        podsMetric(autoscalingMetrics.queueDuration.customMetric, args.autoscaling.queueDurationUsPerRequest),
        podsMetric(autoscalingMetrics.gpuUtilization.customMetric, args.autoscaling.gpuUtilizationPercent),
      ],
      behavior: {
        scaleUp: { stabilizationWindowSeconds: 0, policies: [{ type: "Pods", value: 2, periodSeconds: 60 }] },
        scaleDown: {
          stabilizationWindowSeconds: args.autoscaling.scaleDownStabilizationSeconds,
          policies: [{ type: "Pods", value: 1, periodSeconds: 120 }],
        },
      },
    },
  }, inNamespace);
  // Who may reach the server: the load balancer's proxies and health checks (NEG endpoints are pod IPs), the
  // in-cluster load test, and Prometheus on the metrics port. Nothing else in or outside the cluster.
  denyAllIngress(`${name}-deny-ingress`, namespaceName, inNamespace);
  allowIngress(`${name}-server-ingress`, { name: appName, namespace: namespaceName }, labels, [
    { from: addressesIn(googleLoadBalancerRanges), ports: tcp(inferenceServer.ports.http, inferenceServer.ports.grpc) },
    { from: [podsIn(namespaceName, loadTestPodLabels)], ports: tcp(inferenceServer.ports.http, inferenceServer.ports.grpc) },
    { from: [podsIn(monitoringNames.namespace, monitoringNames.prometheusPodLabels)], ports: tcp(inferenceServer.ports.metrics) },
  ], inNamespace);
  return {
    service,
    deployment,
    adminKeySecret,
    negs: standaloneNegs(args, service, negNames, opts.parent ?? service),
  };
}

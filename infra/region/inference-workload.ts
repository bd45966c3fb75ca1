import * as gcp from "@pulumi/gcp";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { autoscalingMetrics } from "../autoscaling-metrics";
import { inferenceServer } from "../inference-server";
import { type RegionConfig, type StackConfig } from "../stack-config";
import { GPU_TAINT, T4_ACCELERATOR } from "./gpu-node-pool";

/** Arguments of {@link createInferenceWorkload}. */
export interface InferenceWorkloadArgs {
  readonly project: string;
  readonly region: RegionConfig;
  /** Digest-qualified image reference. */
  readonly image: pulumi.Input<string>;
  readonly modelBucketName: pulumi.Input<string>;
  /** The Google service account the pods act as (Workload Identity), which may read the bucket. */
  readonly serverServiceAccountEmail: pulumi.Input<string>;
  readonly server: StackConfig["server"];
  readonly autoscaling: StackConfig["autoscaling"];
}

/** The serving side of one cluster, and the NEGs GKE made for it. */
export interface InferenceWorkload {
  readonly service: k8s.core.v1.Service;
  readonly deployment: k8s.apps.v1.Deployment;
  /** Self-links of the port-8000 NEGs, one per zone. */
  readonly httpNegs: pulumi.Output<string>[];
  /** Self-links of the port-8001 NEGs, one per zone. */
  readonly grpcNegs: pulumi.Output<string>[];
}

// Long enough for the LB to stop sending (2 failed checks x 5 s) and for in-flight requests to finish.
const PRE_STOP_SLEEP_SECONDS = 15;
// preStop + the server's own drain (--exit-timeout-secs, 30 s) must fit inside the grace period.
const TERMINATION_GRACE_SECONDS = 60;

/** The Service annotation that makes GKE create standalone NEGs with fixed names for the load balancer. */
function negAnnotation(negNames: RegionConfig["negNames"]): string {
  return JSON.stringify({
    exposed_ports: {
      [String(inferenceServer.ports.http)]: { name: negNames.http },
      [String(inferenceServer.ports.grpc)]: { name: negNames.grpc },
    },
  });
}

function serverContainer(args: InferenceWorkloadArgs): k8s.types.input.core.v1.Container {
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
    ],
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
    volumeMounts: [{ name: "model-repository", mountPath: inferenceServer.modelRepositoryMountPath, readOnly: true }],
    securityContext: {
      runAsNonRoot: true,
      runAsUser: 1000,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
    },
  };
}

function lookUpNegs(name: string, args: InferenceWorkloadArgs, negName: string, dependsOn: pulumi.Resource[], parent: pulumi.Resource) {
  return args.region.zones.map((zone) =>
    gcp.compute.getNetworkEndpointGroupOutput({ project: args.project, zone, name: negName }, { parent, dependsOn })
      .apply((neg) => {
        if (neg.selfLink === undefined) throw new pulumi.ResourceError(`${name}: NEG ${negName} in ${zone} has no self-link`, parent);
        return neg.selfLink;
      }));
}

/**
 * The inference server in one cluster: its namespace and Workload Identity service account, a Deployment
 * with one T4 per pod and the model bucket mounted read-only through Cloud Storage FUSE, a Service whose
 * annotation makes GKE create the standalone NEGs (fixed names) the global load balancer uses, a PDB, and
 * an HPA on queue time per request and GPU utilization (both served by prometheus-adapter).
 *
 * The NEGs exist only once the Service has ready pods behind it, so they are looked up after the
 * Deployment is ready (Pulumi waits for that); a lookup that still fails on a first `up` succeeds on retry.
 */
export function createInferenceWorkload(name: string, args: InferenceWorkloadArgs, opts: pulumi.CustomResourceOptions): InferenceWorkload {
  const { namespace: namespaceName, name: appName } = inferenceServer.kubernetes;
  const labels = { "app.kubernetes.io/name": appName };
  const namespace = new k8s.core.v1.Namespace(`${name}-namespace`, { metadata: { name: namespaceName } }, opts);
  const inNamespace = { ...opts, dependsOn: [namespace] };
  const serviceAccount = new k8s.core.v1.ServiceAccount(`${name}-service-account`, {
    metadata: {
      name: appName,
      namespace: namespaceName,
      annotations: { "iam.gke.io/gcp-service-account": args.serverServiceAccountEmail },
    },
  }, inNamespace);
  const deployment = new k8s.apps.v1.Deployment(`${name}-deployment`, {
    metadata: { name: appName, namespace: namespaceName, labels },
    spec: {
      // No `replicas`: the HPA owns the count, and Pulumi would otherwise reset it on every update.
      selector: { matchLabels: labels },
      strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      template: {
        metadata: { labels, annotations: { "gke-gcsfuse/volumes": "true" } },
        spec: {
          serviceAccountName: serviceAccount.metadata.name,
          terminationGracePeriodSeconds: TERMINATION_GRACE_SECONDS,
          nodeSelector: { "cloud.google.com/gke-accelerator": T4_ACCELERATOR },
          tolerations: [{ key: GPU_TAINT.key, operator: "Exists", effect: "NoSchedule" }],
          topologySpreadConstraints: [{
            maxSkew: 1,
            topologyKey: "topology.kubernetes.io/zone",
            whenUnsatisfiable: "ScheduleAnyway",
            labelSelector: { matchLabels: labels },
          }],
          containers: [serverContainer(args)],
          volumes: [{
            name: "model-repository",
            csi: {
              driver: "gcsfuse.csi.storage.gke.io",
              readOnly: true,
              volumeAttributes: { bucketName: args.modelBucketName, mountOptions: "implicit-dirs" },
            },
          }],
        },
      },
    },
  }, { ...inNamespace, customTimeouts: { create: "30m", update: "30m" } });
  const service = new k8s.core.v1.Service(`${name}-service`, {
    metadata: {
      name: appName,
      namespace: namespaceName,
      labels,
      annotations: { "cloud.google.com/neg": negAnnotation(args.region.negNames) },
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
  const parent = opts.parent ?? service;
  const negDependencies = [service, deployment];
  return {
    service,
    deployment,
    httpNegs: lookUpNegs(name, args, args.region.negNames.http, negDependencies, parent),
    grpcNegs: lookUpNegs(name, args, args.region.negNames.grpc, negDependencies, parent),
  };
}

import * as k8s from "@pulumi/kubernetes";
import type * as pulumi from "@pulumi/pulumi";
import { inferenceServer } from "../inference-server";
import { type StackConfig } from "../stack-config";
import { adminKeyEnv, serverImageSecurityContext } from "./inference-workload";
import { monitoringNames } from "./monitoring-names";

/** Names the load test's Job, pods and PodMonitor share. */
const loadTestNames = {
  name: "inference-load-test",
  /** The port inference-perf serves its results on (`--prometheus-port`). */
  metricsPort: 9102,
} as const;

/** Arguments of {@link createLoadTest}. */
export interface LoadTestArgs {
  readonly loadTest: StackConfig["loadTest"];
  /** The server image, which carries inference-perf. */
  readonly image: pulumi.Input<string>;
  /** The restricted APIs' key: inference-perf reads the model's config and statistics, which need it. */
  readonly adminKeySecret: k8s.core.v1.Secret;
  /** The test starts once the Deployment is ready. */
  readonly deployment: pulumi.Resource;
  /** kube-prometheus-stack, which defines the PodMonitor kind. */
  readonly monitoring: pulumi.Resource;
}

const { environmentVariable, header, grpcMetadataPrefix } = inferenceServer.restrictedApis;

/** inference-perf's command line: perf_analyzer's flags, the sweep from the stack config, the CSV to the log. */
function loadTestArguments(loadTest: StackConfig["loadTest"]): string[] {
  const { namespace, name } = inferenceServer.kubernetes;
  const port = loadTest.protocol === "grpc" ? inferenceServer.ports.grpc : inferenceServer.ports.http;
  const keyHeader = loadTest.protocol === "grpc" ? `${grpcMetadataPrefix}${header}` : header;
  return [
    "-m", loadTest.model,
    "-u", `${name}.${namespace}.svc.cluster.local:${port}`,
    "-i", loadTest.protocol,
    "-b", String(loadTest.batchSize),
    loadTest.mode === "concurrency" ? "--concurrency-range" : "--request-rate-range", loadTest.range,
    "-p", String(loadTest.measurementIntervalMs),
    "-r", String(loadTest.maxTrials),
    "-f", "/dev/stdout",
    // Kubernetes substitutes $(VAR) from the container's environment: the key never appears in the spec.
    "-H", `${keyHeader}:$(${environmentVariable})`,
    "--prometheus-port", String(loadTestNames.metricsPort),
    "--prometheus-linger-ms", String(loadTest.lingerSeconds * 1000),
  ];
}

/**
 * The in-cluster load test (stack config `loadTest`): a Job on the system pool that runs inference-perf from the
 * server image against the region's Service, with perf_analyzer's CSV in its log, and a PodMonitor so Prometheus
 * scrapes the client-side throughput and latency it serves while it runs. `pulumi up` does not wait for it
 * (skipAwait): it runs after the update, as the seeds' Locust step did. A new `runId` runs it again.
 */
export function createLoadTest(name: string, args: LoadTestArgs, opts: pulumi.CustomResourceOptions): k8s.batch.v1.Job {
  const labels = { "app.kubernetes.io/name": loadTestNames.name };
  const job = new k8s.batch.v1.Job(`${name}-load-test`, {
    metadata: {
      name: `${loadTestNames.name}-${args.loadTest.runId}`,
      namespace: inferenceServer.kubernetes.namespace,
      labels,
      annotations: { "pulumi.com/skipAwait": "true" },
    },
    spec: {
      backoffLimit: 0,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: "Never",
          nodeSelector: { "inference.gke.io/pool": "system" },
          containers: [{
            name: "inference-perf",
            image: args.image,
            command: ["node", "dist/tools/perf/main.js"],
            args: loadTestArguments(args.loadTest),
            env: [adminKeyEnv(args.adminKeySecret)],
            ports: [{ name: "metrics", containerPort: loadTestNames.metricsPort }],
            resources: { requests: { cpu: "2", memory: "2Gi" }, limits: { memory: "2Gi" } },
            securityContext: serverImageSecurityContext,
          }],
        },
      },
    },
  }, { ...opts, dependsOn: [args.deployment, args.adminKeySecret] });
  new k8s.apiextensions.CustomResource(`${name}-load-test-monitor`, {
    apiVersion: "monitoring.coreos.com/v1",
    kind: "PodMonitor",
    metadata: { name: loadTestNames.name, namespace: monitoringNames.namespace },
    spec: {
      namespaceSelector: { matchNames: [inferenceServer.kubernetes.namespace] },
      selector: { matchLabels: labels },
      // Shorter than a measurement window, so every window's figures reach Prometheus.
      podMetricsEndpoints: [{ port: "metrics", path: "/metrics", interval: "5s" }],
    },
  }, { ...opts, dependsOn: [args.monitoring] });
  return job;
}

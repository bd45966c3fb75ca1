import * as k8s from "@pulumi/kubernetes";
import type * as pulumi from "@pulumi/pulumi";
import { inferenceServer } from "../inference-server";
import { type StackConfig } from "../stack-config";
import { adminKeyEnv, loadTestPodLabels } from "./inference-workload";
import { monitoringNames } from "./monitoring-names";
import { allowIngress, podsIn, tcp } from "./network-policies";
import { restrictedContainerSecurityContext, scratchVolume } from "./pod-security";

/** Names the load test's Job, pods and PodMonitor share. */
const loadTestNames = {
  name: "inference-load-test",
  /** The port inference-perf serves its results on (`--prometheus-port`). */
  metricsPort: 9102,
  /** Where the launcher script is mounted. */
  launcherDir: "/etc/inference-load-test",
} as const;

/**
 * inference-perf's entry point in the server image (WORKDIR /app, see server/Dockerfile.cuda). The launcher
 * loads it in-process; if the tool moves in the image, this is the one place to follow it.
 */
const INFERENCE_PERF_ENTRY = "/app/dist/tools/perf/main.js";

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

/** The header that carries the admin key: HTTP header, or gRPC metadata with Triton's prefix. */
function adminKeyHeader(loadTest: StackConfig["loadTest"]): string {
  return loadTest.protocol === "grpc" ? `${grpcMetadataPrefix}${header}` : header;
}

/**
 * A two-line Node.js launcher (mounted from a ConfigMap) that adds `-H <header>:<key>` to inference-perf's flags
 * in-process, the key read from the container's environment (the Secret), and then runs inference-perf. The key
 * is thereby in no command line: not in the pod spec, `kubectl describe`, `ps` or /proc/<pid>/cmdline, which
 * Kubernetes' `$(VAR)` substitution in `args` would have put it in.
 */
export function loadTestLauncher(loadTest: StackConfig["loadTest"]): string {
  return [
    "// inference-perf with the admin key from the environment, never from argv (see infra/region/load-test.ts).",
    `const key = process.env[${JSON.stringify(environmentVariable)}];`,
    `if (!key) { console.error("inference-load-test: ${environmentVariable} is not set"); process.exit(2); }`,
    `process.argv.push("-H", ${JSON.stringify(`${adminKeyHeader(loadTest)}:`)} + key);`,
    `require(${JSON.stringify(INFERENCE_PERF_ENTRY)});`,
    "",
  ].join("\n");
}

/** inference-perf's command line: perf_analyzer's flags, the sweep from the stack config, the CSV to the log (the key is added by the launcher). */
function loadTestArguments(loadTest: StackConfig["loadTest"]): string[] {
  const { namespace, name } = inferenceServer.kubernetes;
  const port = loadTest.protocol === "grpc" ? inferenceServer.ports.grpc : inferenceServer.ports.http;
  return [
    "-m", loadTest.model,
    "-u", `${name}.${namespace}.svc.cluster.local:${port}`,
    "-i", loadTest.protocol,
    "-b", String(loadTest.batchSize),
    loadTest.mode === "concurrency" ? "--concurrency-range" : "--request-rate-range", loadTest.range,
    "-p", String(loadTest.measurementIntervalMs),
    "-r", String(loadTest.maxTrials),
    "-f", "/dev/stdout",
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
  const labels = { ...loadTestPodLabels };
  const namespace = inferenceServer.kubernetes.namespace;
  const launcher = new k8s.core.v1.ConfigMap(`${name}-load-test-launcher`, {
    metadata: { name: `${loadTestNames.name}-launcher`, namespace, labels },
    data: { "launch.js": loadTestLauncher(args.loadTest) },
  }, opts);
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
          securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
          containers: [{
            name: "inference-perf",
            image: args.image,
            command: ["node", `${loadTestNames.launcherDir}/launch.js`],
            args: loadTestArguments(args.loadTest),
            env: [adminKeyEnv(args.adminKeySecret)],
            ports: [{ name: "metrics", containerPort: loadTestNames.metricsPort }],
            resources: { requests: { cpu: "2", memory: "2Gi" }, limits: { memory: "2Gi" } },
            volumeMounts: [{ name: "launcher", mountPath: loadTestNames.launcherDir, readOnly: true }, scratchVolume.mount],
            securityContext: restrictedContainerSecurityContext,
          }],
          volumes: [{ name: "launcher", configMap: { name: launcher.metadata.name } }, scratchVolume.volume],
        },
      },
    },
  }, { ...opts, dependsOn: [args.deployment, args.adminKeySecret, launcher] });
  allowIngress(`${name}-load-test-ingress`, { name: loadTestNames.name, namespace }, labels, [
    { from: [podsIn(monitoringNames.namespace, monitoringNames.prometheusPodLabels)], ports: tcp(loadTestNames.metricsPort) },
  ], opts);
  new k8s.apiextensions.CustomResource(`${name}-load-test-monitor`, {
    apiVersion: "monitoring.coreos.com/v1",
    kind: "PodMonitor",
    metadata: { name: loadTestNames.name, namespace: monitoringNames.namespace },
    spec: {
      namespaceSelector: { matchNames: [namespace] },
      selector: { matchLabels: labels },
      // Shorter than a measurement window, so every window's figures reach Prometheus.
      podMetricsEndpoints: [{ port: "metrics", path: "/metrics", interval: "5s" }],
    },
  }, { ...opts, dependsOn: [args.monitoring] });
  return job;
}

import fs from "node:fs";
import path from "node:path";
import { load as loadYaml } from "js-yaml";
import { beforeAll, describe, expect, it } from "vitest";
import { infraPolicies } from "../../../infra/policy/policies";
import { type RawStackConfig } from "../../../infra/stack-config";
import {
  FIXTURE_DASHBOARDS_DIR, input, resourceNamed, resourcesOfType, runFixtureStack, type FixtureStack,
} from "./fixture-stack";

const T = {
  cluster: "gcp:container/cluster:Cluster",
  nodePool: "gcp:container/nodePool:NodePool",
  provider: "pulumi:providers:kubernetes",
  deployment: "kubernetes:apps/v1:Deployment",
  service: "kubernetes:core/v1:Service",
  serviceAccount: "kubernetes:core/v1:ServiceAccount",
  hpa: "kubernetes:autoscaling/v2:HorizontalPodAutoscaler",
  pdb: "kubernetes:policy/v1:PodDisruptionBudget",
  release: "kubernetes:helm.sh/v3:Release",
  configMap: "kubernetes:core/v1:ConfigMap",
  prometheusRule: "kubernetes:monitoring.coreos.com/v1:PrometheusRule",
  backendService: "gcp:compute/backendService:BackendService",
  healthCheck: "gcp:compute/healthCheck:HealthCheck",
  firewall: "gcp:compute/firewall:Firewall",
  urlMap: "gcp:compute/uRLMap:URLMap",
  certificate: "gcp:compute/managedSslCertificate:ManagedSslCertificate",
  forwardingRule: "gcp:compute/globalForwardingRule:GlobalForwardingRule",
  bucketObject: "gcp:storage/bucketObject:BucketObject",
  negLookup: "gcp:compute/getNetworkEndpointGroup:getNetworkEndpointGroup",
} as const;

/** What every stack must look like, whatever its regions: run once per test file with that file's config. */
export interface StackContractOptions {
  readonly raw: RawStackConfig & { readonly regions: NonNullable<RawStackConfig["regions"]> };
  readonly stack: string;
  readonly grafanaAdminPassword?: string;
}

function negSelfLink(project: string, zone: string, name: string): string {
  return `https://www.googleapis.com/compute/v1/projects/${project}/zones/${zone}/networkEndpointGroups/${name}`;
}

/**
 * Declares the per-region and global assertions shared by the two- and three-region suites and returns
 * the stack for the suite's own tests (available once the suite's beforeAll has run).
 */
export function describeStackContract(options: StackContractOptions): () => FixtureStack {
  let stack: FixtureStack;
  beforeAll(async () => {
    stack = await runFixtureStack(options.raw, options.grafanaAdminPassword === undefined
      ? { stack: options.stack }
      : { stack: options.stack, grafanaAdminPassword: options.grafanaAdminPassword });
  });
  const regionConfig = (name: string) => {
    const region = stack.config.regions.find((candidate) => candidate.name === name);
    if (region === undefined) throw new Error(`region ${name} is not configured`);
    return region;
  };

  describe.each(options.raw.regions.map((region) => region.name))("region %s", (regionName) => {
    it("runs a private, shielded, Workload Identity GKE cluster in the configured T4 zones", () => {
      const region = regionConfig(regionName);
      const cluster = resourceNamed(stack, T.cluster, `${regionName}-cluster`);
      expect(cluster.inputs).toMatchObject({
        name: region.clusterName,
        location: regionName,
        nodeLocations: region.zones,
        networkingMode: "VPC_NATIVE",
        removeDefaultNodePool: true,
        enableShieldedNodes: true,
        deletionProtection: stack.config.cluster.deletionProtection,
        releaseChannel: { channel: stack.config.cluster.releaseChannel },
        workloadIdentityConfig: { workloadPool: `${stack.config.project}.svc.id.goog` },
        privateClusterConfig: { enablePrivateNodes: true, masterIpv4CidrBlock: region.network.masterCidr },
        addonsConfig: { gcsFuseCsiDriverConfig: { enabled: true }, httpLoadBalancing: { disabled: false } },
        monitoringConfig: { managedPrometheus: { enabled: true } },
        resourceLabels: { environment: stack.config.environment },
      });
      expect(input(cluster, "monitoringConfig", "enableComponents")).toContain("DCGM");
      expect(input(cluster, "nodeConfig", "serviceAccount")).toBe(`${stack.config.namePrefix}-nodes@${stack.config.project}.iam.gserviceaccount.com`);
    });

    it("has a T4 pool with the configured GPUs, the nvidia.com/gpu taint, managed drivers and autoscaling", () => {
      const region = regionConfig(regionName);
      const pool = resourceNamed(stack, T.nodePool, `${regionName}-gpu`);
      expect(pool.inputs).toMatchObject({
        cluster: `${regionName}-cluster-id`,
        location: regionName,
        nodeLocations: region.zones,
        autoscaling: { totalMinNodeCount: region.gpuPool.minNodes, totalMaxNodeCount: region.gpuPool.maxNodes, locationPolicy: "ANY" },
        nodeConfig: {
          machineType: region.gpuPool.machineType,
          guestAccelerators: [{ type: "nvidia-tesla-t4", count: stack.config.gpusPerNode, gpuDriverInstallationConfig: { gpuDriverVersion: "DEFAULT" } }],
          taints: [{ key: "nvidia.com/gpu", value: "present", effect: "NO_SCHEDULE" }],
          spot: region.gpuPool.spot,
          workloadMetadataConfig: { mode: "GKE_METADATA" },
          tags: [`${stack.config.namePrefix}-node`],
        },
      });
      const systemPool = resourceNamed(stack, T.nodePool, `${regionName}-system`);
      expect(input(systemPool, "nodeConfig", "guestAccelerators")).toBeUndefined();
      expect(input(systemPool, "autoscaling")).toMatchObject({ minNodeCount: region.systemPool.minNodes, maxNodeCount: region.systemPool.maxNodes });
    });

    it("talks to its own cluster through a kubeconfig built from the cluster's endpoint and CA", () => {
      const provider = resourceNamed(stack, T.provider, `${regionName}-kubernetes`);
      const kubeconfig = JSON.parse(String(provider.inputs["kubeconfig"])) as Record<string, unknown>;
      expect(kubeconfig).toMatchObject({
        "current-context": regionConfig(regionName).clusterName,
        clusters: [{ cluster: { server: "https://203.0.113.10", "certificate-authority-data": "bW9jay1jYQ==" } }],
        users: [{ user: { exec: { command: "gke-gcloud-auth-plugin" } } }],
      });
    });

    it("deploys the server image with one GPU per pod, the bucket as model repository, probes and draining", () => {
      const deployment = resourceNamed(stack, T.deployment, `${regionName}-deployment`);
      const pod = input(deployment, "spec", "template") as Record<string, never>;
      const container = input(deployment, "spec", "template", "spec", "containers", 0) as Record<string, unknown>;
      expect(container["image"]).toBe(stack.outputs.image);
      expect(container["resources"]).toMatchObject({ limits: { "nvidia.com/gpu": "1" }, requests: { "nvidia.com/gpu": "1" } });
      expect(container["args"]).toEqual(expect.arrayContaining(["--model-repository", "/models", "--strict-readiness", "true"]));
      expect(container).toMatchObject({
        startupProbe: { httpGet: { path: "/v2/health/ready", port: "http" } },
        readinessProbe: { httpGet: { path: "/v2/health/ready", port: "http" } },
        livenessProbe: { httpGet: { path: "/v2/health/live", port: "http" } },
        lifecycle: { preStop: { exec: { command: ["sleep", "15"] } } },
        ports: [{ name: "http", containerPort: 8000 }, { name: "grpc", containerPort: 8001 }, { name: "metrics", containerPort: 8002 }],
      });
      expect(Number(input(deployment, "spec", "template", "spec", "terminationGracePeriodSeconds"))).toBeGreaterThanOrEqual(15 + 30);
      expect(pod).toMatchObject({
        metadata: { annotations: { "gke-gcsfuse/volumes": "true" } },
        spec: {
          serviceAccountName: "inference-server",
          nodeSelector: { "cloud.google.com/gke-accelerator": "nvidia-tesla-t4" },
          volumes: [{ csi: { driver: "gcsfuse.csi.storage.gke.io", readOnly: true, volumeAttributes: { bucketName: stack.outputs.modelBucket } } }],
        },
      });
      expect(input(deployment, "spec", "replicas")).toBeUndefined();
      const serviceAccount = resourceNamed(stack, T.serviceAccount, `${regionName}-service-account`);
      expect(input(serviceAccount, "metadata", "annotations", "iam.gke.io/gcp-service-account"))
        .toBe(`${stack.config.namePrefix}-server@${stack.config.project}.iam.gserviceaccount.com`);
    });

    it("exposes the server through standalone NEGs with fixed names, looked up in every zone", () => {
      const region = regionConfig(regionName);
      const service = resourceNamed(stack, T.service, `${regionName}-service`);
      expect(JSON.parse(String(input(service, "metadata", "annotations", "cloud.google.com/neg")))).toEqual({
        exposed_ports: { "8000": { name: region.negNames.http }, "8001": { name: region.negNames.grpc } },
      });
      const lookups = stack.calls.filter((call) => call.token === T.negLookup && String(call.inputs["name"]).startsWith(`${stack.config.namePrefix}-${regionName}-`));
      expect(lookups.map((call) => `${String(call.inputs["zone"])}/${String(call.inputs["name"])}`).sort())
        .toEqual(region.zones.flatMap((zone) => [`${zone}/${region.negNames.grpc}`, `${zone}/${region.negNames.http}`]).sort());
    });

    it("autoscales on queue time per request and on GPU utilization, within the configured replicas", () => {
      const hpa = resourceNamed(stack, T.hpa, `${regionName}-hpa`);
      const { autoscaling } = stack.config;
      expect(hpa.inputs).toMatchObject({
        spec: {
          scaleTargetRef: { kind: "Deployment", name: "inference-server" },
          minReplicas: autoscaling.minReplicas,
          maxReplicas: autoscaling.maxReplicas,
          metrics: [
            { type: "Pods", pods: { metric: { name: "inference_queue_duration_us_per_request" }, target: { type: "AverageValue", averageValue: String(autoscaling.queueDurationUsPerRequest) } } },
            { type: "Pods", pods: { metric: { name: "dcgm_gpu_utilization_percent" }, target: { type: "AverageValue", averageValue: String(autoscaling.gpuUtilizationPercent) } } },
          ],
          behavior: { scaleDown: { stabilizationWindowSeconds: autoscaling.scaleDownStabilizationSeconds } },
        },
      });
      expect(resourceNamed(stack, T.pdb, `${regionName}-pdb`).inputs).toMatchObject({ spec: { maxUnavailable: 1 } });
    });

    it("installs kube-prometheus-stack for GKE, labelling every series with the region", () => {
      const release = resourceNamed(stack, T.release, `${regionName}-kube-prometheus-stack`);
      expect(release.inputs).toMatchObject({
        chart: "kube-prometheus-stack",
        version: stack.config.monitoring.kubePrometheusStackVersion,
        repositoryOpts: { repo: "https://prometheus-community.github.io/helm-charts" },
        namespace: "monitoring",
        values: {
          kubeControllerManager: { enabled: false },
          kubeScheduler: { enabled: false },
          kubeEtcd: { enabled: false },
          prometheus: {
            prometheusSpec: {
              serviceMonitorSelectorNilUsesHelmValues: false,
              podMonitorSelectorNilUsesHelmValues: false,
              ruleSelectorNilUsesHelmValues: false,
              scrapeClasses: [{ default: true, relabelings: [{ targetLabel: "region", replacement: regionName }] }],
            },
          },
          grafana: { sidecar: { dashboards: { enabled: true, label: "grafana_dashboard", labelValue: "1" } } },
        },
      });
      expect(input(release, "values", "grafana", "adminPassword")).not.toBe("prom-operator");
    });

    it("serves the HPA's metrics through prometheus-adapter", () => {
      const adapter = resourceNamed(stack, T.release, `${regionName}-prometheus-adapter`);
      expect(adapter.inputs).toMatchObject({
        chart: "prometheus-adapter",
        values: {
          prometheus: { url: "http://kps-prometheus.monitoring.svc", port: 9090 },
          rules: {
            default: false,
            custom: [
              { seriesQuery: 'inference_server:queue_duration_us_per_request:rate1m{namespace!="",pod!=""}', name: { as: "inference_queue_duration_us_per_request" } },
              { seriesQuery: 'DCGM_FI_DEV_GPU_UTIL{namespace!="",pod!=""}', name: { as: "dcgm_gpu_utilization_percent" } },
            ],
          },
        },
      });
    });

    it("provisions one Grafana dashboard ConfigMap per dashboards/*.json file and the rule file as a PrometheusRule", () => {
      const dashboardFiles = fs.readdirSync(FIXTURE_DASHBOARDS_DIR).filter((name) => name.endsWith(".json")).sort();
      const configMaps = resourcesOfType(stack, T.configMap).filter((resource) => resource.name.startsWith(`${regionName}-dashboard-`));
      expect(configMaps.flatMap((configMap) => Object.keys(input(configMap, "data") as object)).sort()).toEqual(dashboardFiles);
      for (const configMap of configMaps) {
        expect(input(configMap, "metadata", "labels")).toEqual({ grafana_dashboard: "1" });
        const [fileName, json] = Object.entries(input(configMap, "data") as Record<string, string>)[0] as [string, string];
        expect(json).toBe(fs.readFileSync(path.join(FIXTURE_DASHBOARDS_DIR, fileName), "utf8"));
      }
      const rules = resourceNamed(stack, T.prometheusRule, `${regionName}-rules`);
      expect(input(rules, "spec")).toEqual(loadYaml(fs.readFileSync(path.join(FIXTURE_DASHBOARDS_DIR, "alerts.yaml"), "utf8")));
    });
  });

  describe("global", () => {
    const allNegs = (kind: "http" | "grpc") => stack.config.regions.flatMap((region) =>
      region.zones.map((zone) => negSelfLink(stack.config.project, zone, region.negNames[kind])));

    it("balances every region's NEGs by request rate: REST over HTTP, gRPC over cleartext HTTP/2", () => {
      const prefix = stack.config.namePrefix;
      for (const [kind, protocol] of [["http", "HTTP"], ["grpc", "H2C"]] as const) {
        const backend = resourceNamed(stack, T.backendService, `${prefix}-lb-${kind}`);
        expect(backend.inputs).toMatchObject({
          protocol,
          loadBalancingScheme: "EXTERNAL_MANAGED",
          healthChecks: `${prefix}-lb-ready-id`,
          securityPolicy: `${prefix}-lb-armor-id`,
          logConfig: { enable: true },
        });
        const backends = input(backend, "backends") as { group: string; balancingMode: string; maxRatePerEndpoint: number }[];
        expect(backends.map((entry) => entry.group).sort()).toEqual(allNegs(kind).sort());
        expect(new Set(backends.map((entry) => `${entry.balancingMode}/${entry.maxRatePerEndpoint}`)))
          .toEqual(new Set([`RATE/${stack.config.loadBalancer.maxRatePerEndpoint}`]));
      }
    });

    it("health-checks the KServe v2 readiness endpoint on the HTTP port", () => {
      const healthCheck = resourceNamed(stack, T.healthCheck, `${stack.config.namePrefix}-lb-ready`);
      expect(input(healthCheck, "httpHealthCheck")).toEqual({ port: 8000, portSpecification: "USE_FIXED_PORT", requestPath: "/v2/health/ready" });
    });

    it("admits only Google's load balancer ranges to the serving ports, and nothing from anywhere", () => {
      const firewall = resourceNamed(stack, T.firewall, `${stack.config.namePrefix}-vpc-allow-load-balancer`);
      expect(firewall.inputs).toMatchObject({
        direction: "INGRESS",
        sourceRanges: ["35.191.0.0/16", "130.211.0.0/22"],
        allows: [{ protocol: "tcp", ports: ["8000", "8001"] }],
        targetTags: [`${stack.config.namePrefix}-node`],
      });
      for (const rule of resourcesOfType(stack, T.firewall)) {
        expect(input(rule, "sourceRanges")).not.toContain("0.0.0.0/0");
      }
    });

    it("routes the gRPC inference service to the gRPC backend and everything else to REST", () => {
      const routes = resourceNamed(stack, T.urlMap, `${stack.config.namePrefix}-lb-routes`);
      expect(routes.inputs).toMatchObject({
        defaultService: `${stack.config.namePrefix}-lb-http-id`,
        pathMatchers: [{
          defaultService: `${stack.config.namePrefix}-lb-http-id`,
          pathRules: [{ paths: ["/inference.GRPCInferenceService/*"], service: `${stack.config.namePrefix}-lb-grpc-id` }],
        }],
      });
    });

    it("uploads every file of the model repository, with ONNX models switched to KIND_GPU", () => {
      const objects = resourcesOfType(stack, T.bucketObject);
      expect(objects.map((object) => object.inputs["name"]).sort())
        .toEqual(["identity_fp32/config.pbtxt", "mlp/1/model.onnx", "mlp/config.pbtxt", "simple/1/model.onnx", "simple/config.pbtxt"]);
      const mlpConfig = objects.find((object) => object.inputs["name"] === "mlp/config.pbtxt");
      expect(String(mlpConfig?.inputs["content"])).toMatch(/kind: KIND_GPU/);
      expect(String(mlpConfig?.inputs["content"])).not.toMatch(/KIND_CPU/);
    });

    it("passes every policy rule on every resource it declares", () => {
      const violations = stack.resources.flatMap((resource) => infraPolicies.flatMap((policy) =>
        policy.check({ type: resource.type, props: resource.inputs }).map((message) => `${policy.name} on ${resource.name}: ${message}`)));
      expect(violations).toEqual([]);
    });

    it("outputs the address, every region's cluster and Grafana access, and the image", () => {
      expect(stack.outputs.ipAddress).toBe("203.0.113.10");
      expect(Object.keys(stack.outputs.clusters).sort()).toEqual(stack.config.regions.map((region) => region.name).sort());
      for (const region of stack.config.regions) {
        const cluster = stack.outputs.clusters[region.name];
        expect(cluster?.name).toBe(region.clusterName);
        expect(cluster?.grafana).toContain(`get-credentials ${region.clusterName} --region ${region.name}`);
        expect(cluster?.grafana).toContain("port-forward svc/kps-grafana");
      }
    });
  });

  return () => stack;
}

export { T as resourceTypes };

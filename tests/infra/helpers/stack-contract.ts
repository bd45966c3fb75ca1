import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { load as loadYaml } from "js-yaml";
import { beforeAll, describe, expect, it } from "vitest";
import { infraPolicies } from "../../../infra/policy/policies";
import { type RawStackConfig } from "../../../infra/stack-config";
import { kubernetesObjectOf, schemaProblems } from "./kubernetes-schemas";
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
  readonly alertmanagerConfig?: string;
}

interface RouteRule {
  readonly priority: number;
  readonly matchRules: { readonly fullPathMatch?: string; readonly pathTemplateMatch?: string }[];
  readonly service: string;
  readonly routeAction?: unknown;
}

/** Whether a load balancer path template (`*` = one segment, `**` = any) matches a path. */
function templateMatches(template: string, path: string): boolean {
  const pattern = template.split("/").map((segment) => (segment === "**" ? ".*" : segment === "*" ? "[^/]+" : segment.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))).join("/");
  return new RegExp(`^${pattern}$`).test(path);
}

/** Where the URL map sends a path, as the load balancer decides: the first route rule by priority that matches. */
function routeOf(rules: readonly RouteRule[], prefix: string): (path: string) => "http" | "grpc" | "refused" {
  const ordered = [...rules].sort((a, b) => a.priority - b.priority);
  return (path) => {
    const rule = ordered.find((candidate) => candidate.matchRules.some((match) =>
      match.fullPathMatch === path || (match.pathTemplateMatch !== undefined && templateMatches(match.pathTemplateMatch, path))));
    if (rule === undefined || rule.routeAction !== undefined) return "refused";
    return rule.service === `${prefix}-lb-grpc-id` ? "grpc" : "http";
  };
}

/** The NEG names the program derives from a region's (mock-generated) cluster name. */
function negNamesOf(region: string): { http: string; grpc: string } {
  return { http: `${region}-cluster-http`, grpc: `${region}-cluster-grpc` };
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
    stack = await runFixtureStack(options.raw, {
      stack: options.stack,
      ...(options.grafanaAdminPassword === undefined ? {} : { grafanaAdminPassword: options.grafanaAdminPassword }),
      ...(options.alertmanagerConfig === undefined ? {} : { alertmanagerConfig: options.alertmanagerConfig }),
    });
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
      // No fixed name: Pulumi generates one, so a replacement can be created before the old cluster goes.
      expect(cluster.inputs["name"]).toBeUndefined();
      expect(cluster.inputs).toMatchObject({
        location: regionName,
        nodeLocations: region.zones,
        networkingMode: "VPC_NATIVE",
        removeDefaultNodePool: true,
        enableShieldedNodes: true,
        deletionProtection: stack.config.cluster.deletionProtection,
        releaseChannel: { channel: stack.config.cluster.releaseChannel },
        workloadIdentityConfig: { workloadPool: `${stack.config.project}.svc.id.goog` },
        privateClusterConfig: { enablePrivateNodes: true, enablePrivateEndpoint: true, masterIpv4CidrBlock: region.network.masterCidr },
        controlPlaneEndpointsConfig: { dnsEndpointConfig: { allowExternalTraffic: true } },
        addonsConfig: { gcsFuseCsiDriverConfig: { enabled: true }, httpLoadBalancing: { disabled: false } },
        monitoringConfig: { managedPrometheus: { enabled: true } },
        resourceLabels: { environment: stack.config.environment, stack: stack.config.stack },
        deletionPolicy: stack.config.protectResources ? "PREVENT" : "DELETE",
      });
      // GKE refuses a private endpoint without authorized networks: on, with no CIDR and no Google Cloud public IPs.
      expect(input(cluster, "masterAuthorizedNetworksConfig")).toEqual({ gcpPublicCidrsAccessEnabled: false });
      expect(input(cluster, "privateClusterConfig", "masterGlobalAccessConfig")).toBeUndefined();
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
        // Created empty: a T4 stockout cannot fail the create, and the autoscaler adds nodes as pods ask for GPUs.
        initialNodeCount: 0,
        autoscaling: { totalMinNodeCount: region.gpuPool.minNodes, totalMaxNodeCount: region.gpuPool.maxNodes, locationPolicy: region.gpuPool.locationPolicy },
        networkConfig: { enablePrivateNodes: true },
        nodeConfig: {
          machineType: region.gpuPool.machineType,
          guestAccelerators: [{ type: "nvidia-tesla-t4", count: stack.config.gpusPerNode, gpuDriverInstallationConfig: { gpuDriverVersion: "LATEST" } }],
          taints: [{ key: "nvidia.com/gpu", value: "present", effect: "NO_SCHEDULE" }],
          spot: region.gpuPool.spot,
          workloadMetadataConfig: { mode: "GKE_METADATA" },
          tags: [`${stack.config.namePrefix}-node`],
          gcfsConfig: { enabled: true },
          gvnic: { enabled: true },
        },
      });
      const systemPool = resourceNamed(stack, T.nodePool, `${regionName}-system`);
      expect(input(systemPool, "nodeConfig", "guestAccelerators")).toBeUndefined();
      expect(input(systemPool, "autoscaling")).toMatchObject({ totalMinNodeCount: region.systemPool.minNodes, totalMaxNodeCount: region.systemPool.maxNodes });
    });

    it("talks to its own cluster through the IAM-only DNS endpoint, and keeps unreachable clusters' objects in state", () => {
      const provider = resourceNamed(stack, T.provider, `${regionName}-kubernetes`);
      const kubeconfig = JSON.parse(String(provider.inputs["kubeconfig"])) as { clusters: { cluster: Record<string, unknown> }[] };
      expect(kubeconfig).toMatchObject({
        "current-context": `${regionName}-cluster`,
        clusters: [{ cluster: { server: `https://gke-${regionName}-cluster.${regionName}.gke.goog` } }],
        users: [{ user: { exec: { command: "gke-gcloud-auth-plugin" } } }],
      });
      // The DNS endpoint's certificate is publicly trusted: pinning the cluster CA would break verification.
      expect(kubeconfig.clusters[0]?.cluster["certificate-authority-data"]).toBeUndefined();
      // deleteUnreachable stays off: a refresh that cannot reach a cluster must fail, not forget its workload.
      expect(provider.inputs["deleteUnreachable"]).toBeUndefined();
    });

    it("deploys the server image with one GPU per pod, the bucket as model repository, probes and draining", () => {
      const deployment = resourceNamed(stack, T.deployment, `${regionName}-deployment`);
      const pod = input(deployment, "spec", "template") as Record<string, never>;
      const container = input(deployment, "spec", "template", "spec", "containers", 0) as Record<string, unknown>;
      // Each region runs its own continent's copy of the image and mounts its continent's bucket.
      const continent = stack.config.continents.find((candidate) => candidate.regions.includes(regionName));
      expect(container["image"]).toBe(stack.outputs.clusters[regionName]?.image);
      expect(stack.outputs.clusters[regionName]?.modelBucket).toBe(continent?.bucketName);
      expect(container["resources"]).toMatchObject({ limits: { "nvidia.com/gpu": "1" }, requests: { "nvidia.com/gpu": "1" } });
      expect(container["args"]).toEqual(expect.arrayContaining([
        "--model-repository", "/models", "--strict-readiness", "true",
        "--http-restricted-api=model-repository,model-config,statistics,trace,logging,shared-memory:admin-key=env:INFERENCE_ADMIN_KEY",
        "--grpc-restricted-protocol=model-repository,model-config,statistics,trace,logging,shared-memory:admin-key=env:INFERENCE_ADMIN_KEY",
      ]));
      expect((container["env"] as unknown[]).slice(0, 1)).toEqual([{ name: "INFERENCE_ADMIN_KEY", valueFrom: { secretKeyRef: { name: "inference-admin-key", key: "admin-key" } } }]);
      expect(JSON.stringify(deployment.inputs)).not.toContain(stack.outputs.adminKey);
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
          serviceAccountName: `inference-server-${regionName}`,
          nodeSelector: { "cloud.google.com/gke-accelerator": "nvidia-tesla-t4" },
          volumes: [
            { csi: { driver: "gcsfuse.csi.storage.gke.io", readOnly: true, volumeAttributes: { bucketName: continent?.bucketName } } },
            { name: "tmp", emptyDir: {} },
          ],
        },
      });
      expect(input(deployment, "spec", "replicas")).toBeUndefined();
      expect(input(deployment, "spec", "template", "metadata", "annotations", "inference.gke.io/admin-key-sha256"))
        .toBe(createHash("sha256").update(stack.outputs.adminKey).digest("hex"));
      const secret = resourceNamed(stack, "kubernetes:core/v1:Secret", `${regionName}-admin-key`);
      expect(secret.inputs).toMatchObject({ metadata: { name: "inference-admin-key", namespace: "inference" }, stringData: { "admin-key": stack.outputs.adminKey } });
      const serviceAccount = resourceNamed(stack, T.serviceAccount, `${regionName}-service-account`);
      expect(input(serviceAccount, "metadata", "name")).toBe(`inference-server-${regionName}`);
      expect(input(serviceAccount, "metadata", "annotations", "iam.gke.io/gcp-service-account"))
        .toBe(`${stack.config.namePrefix}-server@${stack.config.project}.iam.gserviceaccount.com`);
    });

    it("runs the server as the restricted Pod Security Standard asks: non-root, no privileges, RuntimeDefault seccomp, read-only root with /tmp as scratch", () => {
      const deployment = resourceNamed(stack, T.deployment, `${regionName}-deployment`);
      const container = input(deployment, "spec", "template", "spec", "containers", 0) as Record<string, unknown>;
      expect(container["securityContext"]).toEqual({
        runAsNonRoot: true, runAsUser: 1000, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true,
        capabilities: { drop: ["ALL"] }, seccompProfile: { type: "RuntimeDefault" },
      });
      expect(input(deployment, "spec", "template", "spec", "securityContext")).toEqual({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
      expect(container["volumeMounts"]).toEqual(expect.arrayContaining([{ name: "tmp", mountPath: "/tmp" }]));
      expect(container["env"]).toEqual(expect.arrayContaining([{ name: "CUDA_CACHE_PATH", value: "/tmp/cuda-cache" }]));
      expect(input(resourceNamed(stack, "kubernetes:core/v1:Namespace", `${regionName}-namespace`), "metadata", "labels")).toEqual({
        "pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/audit": "restricted", "pod-security.kubernetes.io/warn": "restricted",
      });
      // node-exporter needs the host: monitoring is privileged, audited and warned against baseline.
      expect(input(resourceNamed(stack, "kubernetes:core/v1:Namespace", `${regionName}-monitoring-namespace`), "metadata", "labels")).toMatchObject({
        "pod-security.kubernetes.io/enforce": "privileged", "pod-security.kubernetes.io/audit": "baseline",
      });
    });

    it("lets only the load balancer, the load test and Prometheus reach the server, and only monitoring itself and the API server (through Konnectivity or from the control-plane range) reach monitoring", () => {
      const region = regionConfig(regionName);
      const policy = (name: string) => resourceNamed(stack, "kubernetes:networking.k8s.io/v1:NetworkPolicy", name).inputs;
      for (const [name, namespace] of [[`${regionName}-deny-ingress`, "inference"], [`${regionName}-monitoring-deny-ingress`, "monitoring"]] as const) {
        expect(policy(name)).toMatchObject({ metadata: { namespace }, spec: { podSelector: {}, policyTypes: ["Ingress"] } });
        expect(policy(name)["spec"]).not.toHaveProperty("ingress");
      }
      const tcp = (...ports: number[]) => ports.map((port) => ({ protocol: "TCP", port }));
      expect(policy(`${regionName}-server-ingress`)).toEqual({
        apiVersion: "networking.k8s.io/v1",
        kind: "NetworkPolicy",
        metadata: { name: "inference-server", namespace: "inference" },
        spec: {
          podSelector: { matchLabels: { "app.kubernetes.io/name": "inference-server" } },
          policyTypes: ["Ingress"],
          ingress: [
            { from: [{ ipBlock: { cidr: "35.191.0.0/16" } }, { ipBlock: { cidr: "130.211.0.0/22" } }], ports: tcp(8000, 8001) },
            { from: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "inference" } }, podSelector: { matchLabels: { "app.kubernetes.io/name": "inference-load-test" } } }], ports: tcp(8000, 8001) },
            { from: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } }, podSelector: { matchLabels: { "app.kubernetes.io/name": "prometheus" } } }], ports: tcp(8002) },
          ],
        },
      });
      expect(input(resourceNamed(stack, "kubernetes:networking.k8s.io/v1:NetworkPolicy", `${regionName}-monitoring-ingress`), "spec", "ingress")).toEqual([
        { from: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } } }] },
        // prometheus-adapter (the custom metrics API the HPA reads) and the operator's webhook, called by the API
        // server through GKE's konnectivity-agent pods (issue 39, item 1), or from the control-plane range without Konnectivity.
        { from: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } }, podSelector: { matchLabels: { "k8s-app": "konnectivity-agent" } } }], ports: tcp(6443, 10250) },
        { from: [{ ipBlock: { cidr: region.network.masterCidr } }], ports: tcp(6443, 10250) },
      ]);
    });

    it("exposes the server through standalone NEGs named after the cluster, pre-provisioned and looked up in every zone", () => {
      const region = regionConfig(regionName);
      const negNames = negNamesOf(regionName);
      const service = resourceNamed(stack, T.service, `${regionName}-service`);
      expect(JSON.parse(String(input(service, "metadata", "annotations", "cloud.google.com/neg")))).toEqual({
        exposed_ports: { "8000": { name: negNames.http }, "8001": { name: negNames.grpc } },
        zones: region.zones,
      });
      const lookups = stack.calls.filter((call) => call.token === T.negLookup && String(call.inputs["name"]).startsWith(`${regionName}-cluster-`));
      expect(lookups.map((call) => `${String(call.inputs["zone"])}/${String(call.inputs["name"])}`).sort())
        .toEqual(region.zones.flatMap((zone) => [`${zone}/${negNames.grpc}`, `${zone}/${negNames.http}`]).sort());
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

    it("attributes DCGM's GPU series to the pod using the GPU, from the exporter's exported_pod/exported_namespace labels", () => {
      const monitor = resourceNamed(stack, "kubernetes:monitoring.coreos.com/v1:PodMonitor", `${regionName}-dcgm-monitor`);
      const endpoint = input(monitor, "spec", "podMetricsEndpoints", 0) as Record<string, unknown>;
      expect(endpoint["honorLabels"]).toBeUndefined();
      expect(endpoint["metricRelabelings"]).toEqual([
        { action: "replace", sourceLabels: ["exported_pod"], regex: "(.+)", targetLabel: "pod", replacement: "$1" },
        { action: "replace", sourceLabels: ["exported_namespace"], regex: "(.+)", targetLabel: "namespace", replacement: "$1" },
        { action: "replace", sourceLabels: ["exported_container"], regex: "(.+)", targetLabel: "container", replacement: "$1" },
        { action: "labeldrop", regex: "exported_(pod|namespace|container)" },
      ]);
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
      region.zones.map((zone) => negSelfLink(stack.config.project, zone, negNamesOf(region.name)[kind])));

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

    it("routes only the public API from the internet: health, metadata and inference, over REST and gRPC", () => {
      const prefix = stack.config.namePrefix;
      const routes = resourceNamed(stack, T.urlMap, `${prefix}-lb-routes`);
      const refuse = { faultInjectionPolicy: { abort: { httpStatus: 404, percentage: 100 } } };
      // Anything that matches no rule, on any host, is answered 404 by the load balancer itself.
      expect(routes.inputs).toMatchObject({ defaultRouteAction: refuse, hostRules: [{ hosts: [stack.config.domain ?? "*"], pathMatcher: "public-api" }] });
      expect(input(routes, "pathMatchers", 0, "defaultRouteAction")).toEqual(refuse);
      const route = routeOf(input(routes, "pathMatchers", 0, "routeRules") as RouteRule[], prefix);
      for (const path of ["/v2/health/live", "/v2/health/ready", "/v2", "/v2/models/resnet50", "/v2/models/resnet50/versions/1",
        "/v2/models/resnet50/ready", "/v2/models/resnet50/infer", "/v2/models/resnet50/versions/3/infer", "/v2/models/llm/generate_stream"]) {
        expect(route(path), path).toBe("http");
      }
      for (const method of ["ServerLive", "ServerReady", "ModelReady", "ServerMetadata", "ModelMetadata", "ModelInfer", "ModelStreamInfer"]) {
        expect(route(`/inference.GRPCInferenceService/${method}`), method).toBe("grpc");
      }
      for (const path of ["/v2/repository/index", "/v2/repository/models/resnet50/load", "/v2/repository/models/resnet50/unload",
        "/v2/models/resnet50/config", "/v2/models/resnet50/versions/1/config", "/v2/models/stats", "/v2/models/resnet50/stats",
        "/v2/models/resnet50/versions/1/stats", "/v2/trace/setting", "/v2/models/resnet50/trace/setting", "/v2/logging",
        "/v2/systemsharedmemory/status", "/v2/systemsharedmemory/region/r/register", "/v2/cudasharedmemory/status", "/metrics"]) {
        expect(route(path), path).toBe("refused");
      }
      for (const method of ["ModelConfig", "ModelStatistics", "RepositoryIndex", "RepositoryModelLoad", "RepositoryModelUnload",
        "SystemSharedMemoryStatus", "SystemSharedMemoryRegister", "SystemSharedMemoryUnregister", "CudaSharedMemoryStatus",
        "CudaSharedMemoryRegister", "CudaSharedMemoryUnregister", "TraceSetting", "LogSettings"]) {
        expect(route(`/inference.GRPCInferenceService/${method}`), method).toBe("refused");
      }
    });

    it("puts Cloud Armor's preconfigured WAF rules before a per-client rate limit", () => {
      const policy = resourceNamed(stack, "gcp:compute/securityPolicy:SecurityPolicy", `${stack.config.namePrefix}-lb-armor`);
      const rules = input(policy, "rules") as { priority: number; action: string; preview?: boolean; match: { expr?: { expression: string } }; rateLimitOptions?: unknown }[];
      const waf = rules.filter((rule) => rule.match.expr?.expression.includes("evaluatePreconfiguredWaf("));
      expect(waf.map((rule) => /'([\w-]+)'/.exec(rule.match.expr?.expression ?? "")?.[1])).toEqual(expect.arrayContaining(["sqli-v33-stable", "xss-v33-stable", "lfi-v33-stable", "rce-v33-stable", "protocolattack-v33-stable"]));
      const { sensitivity, preview } = stack.config.loadBalancer.waf;
      for (const rule of waf) {
        expect(rule).toMatchObject({ action: "deny(403)", preview });
        expect(rule.match.expr?.expression).toContain(`{'sensitivity': ${sensitivity}}`);
        // gRPC (protobuf) bodies are never run through the CRS signatures: they would be false 403s.
        expect(rule.match.expr?.expression).toMatch(/^!request\.path\.startsWith\('\/inference\.GRPCInferenceService\/'\) && evaluatePreconfiguredWaf\(/);
      }
      const throttle = rules.find((rule) => rule.action === "throttle");
      expect(throttle?.rateLimitOptions).toMatchObject({ rateLimitThreshold: { count: stack.config.loadBalancer.rateLimitRequestsPerMinute, intervalSec: 60 } });
      expect(Math.max(...waf.map((rule) => rule.priority))).toBeLessThan(throttle?.priority ?? 0);
      expect(input(policy, "advancedOptionsConfig")).toMatchObject({ jsonParsing: "STANDARD" });
    });

    it("enables every API it uses before creating anything, and leaves them on at destroy", () => {
      const services = resourcesOfType(stack, "gcp:projects/service:Service");
      expect(services.map((service) => service.inputs["service"])).toEqual(expect.arrayContaining([
        "compute.googleapis.com", "container.googleapis.com", "containerfilesystem.googleapis.com", "artifactregistry.googleapis.com",
        "storage.googleapis.com", "iam.googleapis.com", "iamcredentials.googleapis.com", "cloudresourcemanager.googleapis.com",
        "monitoring.googleapis.com", "logging.googleapis.com",
      ]));
      for (const service of services) expect(service.inputs).toMatchObject({ disableOnDestroy: false, disableDependentServices: false });
      // Registration order is creation order here: every other cloud resource waits for the APIs.
      const lastApi = Math.max(...services.map((service) => stack.resources.indexOf(service)));
      const firstOther = stack.resources.findIndex((resource) => resource.custom && resource.type.startsWith("gcp:") && resource.type !== "gcp:projects/service:Service");
      expect(firstOther).toBeGreaterThan(lastApi);
    });

    it("adopts node and server accounts a project owner created beforehand, so the deployer needs serviceAccountUser on those two only", () => {
      const accounts = resourcesOfType(stack, "gcp:serviceaccount/account:Account");
      expect(accounts.map((account) => account.inputs["accountId"]).sort()).toEqual([`${stack.config.namePrefix}-nodes`, `${stack.config.namePrefix}-server`]);
      for (const account of accounts) expect(account.inputs["createIgnoreAlreadyExists"]).toBe(true);
    });

    it("lets the nodes stream images: the node account may call the Container File System API", () => {
      const roles = resourcesOfType(stack, "gcp:projects/iAMMember:IAMMember")
        .filter((member) => member.inputs["member"] === `serviceAccount:${stack.config.namePrefix}-nodes@${stack.config.project}.iam.gserviceaccount.com`)
        .map((member) => member.inputs["role"]);
      expect(roles).toEqual(expect.arrayContaining(["roles/container.defaultNodeServiceAccount", "roles/serviceusage.serviceUsageConsumer"]));
    });

    it("binds Workload Identity per region, for that region's own Kubernetes service account, and starts its pods after it", () => {
      const prefix = stack.config.namePrefix;
      for (const region of stack.config.regions) {
        const binding = resourceNamed(stack, "gcp:serviceaccount/iAMMember:IAMMember", `${prefix}-${region.name}-server-identity-workload-identity-user`);
        expect(binding.inputs).toMatchObject({
          role: "roles/iam.workloadIdentityUser",
          member: `serviceAccount:${stack.config.project}.svc.id.goog[inference/inference-server-${region.name}]`,
        });
        expect(stack.resources.indexOf(resourceNamed(stack, T.deployment, `${region.name}-deployment`))).toBeGreaterThan(stack.resources.indexOf(binding));
      }
      expect(resourcesOfType(stack, "gcp:serviceaccount/iAMMember:IAMMember")).toHaveLength(stack.config.regions.length);
    });

    it("uploads every file of the model repository to every continent's bucket, with ONNX models switched to KIND_GPU", () => {
      const objects = resourcesOfType(stack, T.bucketObject);
      for (const continent of stack.config.continents) {
        expect(objects.filter((object) => object.inputs["bucket"] === continent.bucketName).map((object) => object.inputs["name"]).sort())
          .toEqual(["identity_fp32/config.pbtxt", "mlp/1/model.onnx", "mlp/config.pbtxt", "simple/1/model.onnx", "simple/config.pbtxt", "squeezenet/1/model.onnx", "squeezenet/config.pbtxt"]);
      }
      expect(objects).toHaveLength(7 * stack.config.continents.length);
      const mlpConfig = objects.find((object) => object.inputs["name"] === "mlp/config.pbtxt");
      expect(String(mlpConfig?.inputs["content"])).toMatch(/kind: KIND_GPU/);
      expect(String(mlpConfig?.inputs["content"])).not.toMatch(/KIND_CPU/);
    });

    it("renders only Kubernetes objects that the official schemas accept, unknown fields refused", () => {
      const problems = stack.resources.flatMap((resource) => {
        const object = kubernetesObjectOf(resource);
        return object === undefined ? [] : schemaProblems(object).map((problem) => `${resource.name} (${object.kind}): ${problem}`);
      });
      expect(problems).toEqual([]);
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
        expect(cluster?.name).toBe(`${region.name}-cluster`);
        expect(cluster?.grafana).toContain(`get-credentials ${region.name}-cluster --region ${region.name} --project ${stack.config.project} --dns-endpoint`);
        expect(cluster?.grafana).toContain("port-forward svc/kps-grafana");
        expect(cluster?.servingZones).toEqual(region.zones);
        expect(cluster?.zonesWithoutNeg).toEqual([]);
      }
      expect(stack.outputs.adminKey).toMatch(/\S{8,}/);
    });
  });

  return () => stack;
}

export { T as resourceTypes };

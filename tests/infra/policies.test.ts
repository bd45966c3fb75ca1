import { type ResourceValidationArgs } from "@pulumi/policy";
import { describe, expect, it } from "vitest";
import { infraPolicies, type PolicyResource } from "../../infra/policy/policies";
import { toResourceValidationPolicies } from "../../infra/policy/resource-validation-policies";

const CLUSTER = "gcp:container/cluster:Cluster";
const NODE_POOL = "gcp:container/nodePool:NodePool";
const FIREWALL = "gcp:compute/firewall:Firewall";

const goodNodeConfig = {
  serviceAccount: "nodes@p.iam.gserviceaccount.com",
  workloadMetadataConfig: { mode: "GKE_METADATA" },
  shieldedInstanceConfig: { enableSecureBoot: true, enableIntegrityMonitoring: true },
};
const goodCluster: PolicyResource = {
  type: CLUSTER,
  props: {
    privateClusterConfig: { enablePrivateNodes: true, enablePrivateEndpoint: true },
    masterAuthorizedNetworksConfig: { gcpPublicCidrsAccessEnabled: false },
    datapathProvider: "ADVANCED_DATAPATH",
    addonsConfig: { gcsFuseCsiDriverConfig: { enabled: true } },
    monitoringConfig: { enableComponents: ["SYSTEM_COMPONENTS", "DCGM"], managedPrometheus: { enabled: true } },
    workloadIdentityConfig: { workloadPool: "p.svc.id.goog" },
    enableShieldedNodes: true,
    nodeConfig: goodNodeConfig,
    resourceLabels: { environment: "prod" },
    deletionProtection: true,
  },
};
const goodGpuPool: PolicyResource = {
  type: NODE_POOL,
  props: {
    autoscaling: { totalMinNodeCount: 0, totalMaxNodeCount: 3, locationPolicy: "ANY" },
    upgradeSettings: { maxSurge: 1, maxUnavailable: 0 },
    nodeConfig: {
      ...goodNodeConfig,
      machineType: "n1-standard-4",
      imageType: "COS_CONTAINERD",
      gcfsConfig: { enabled: true },
      guestAccelerators: [{ type: "nvidia-tesla-t4", count: 1, gpuDriverInstallationConfig: { gpuDriverVersion: "LATEST" } }],
      taints: [{ key: "nvidia.com/gpu", value: "present", effect: "NO_SCHEDULE" }],
    },
  },
};
const withProps = (resource: PolicyResource, props: Record<string, unknown>): PolicyResource => ({ type: resource.type, props: { ...resource.props, ...props } });
const goodFirewall: PolicyResource = { type: FIREWALL, props: { sourceRanges: ["35.191.0.0/16"], allows: [{ protocol: "tcp", ports: ["8000"] }] } };
const goodHttpsProxy: PolicyResource = { type: "gcp:compute/targetHttpsProxy:TargetHttpsProxy", props: { urlMap: "m", sslPolicy: "p" } };
const NEG = "https://www.googleapis.com/compute/v1/projects/p/zones/us-central1-a/networkEndpointGroups/neg";
const goodBackend: PolicyResource = {
  type: "gcp:compute/backendService:BackendService",
  props: { loadBalancingScheme: "EXTERNAL_MANAGED", securityPolicy: "armor", backends: [{ group: NEG, balancingMode: "RATE", maxRatePerEndpoint: 100 }] },
};
const goodHealthCheck: PolicyResource = { type: "gcp:compute/healthCheck:HealthCheck", props: { checkIntervalSec: 5, timeoutSec: 5 } };
const goodUrlMap: PolicyResource = {
  type: "gcp:compute/uRLMap:URLMap",
  props: { pathMatchers: [{ name: "api", routeRules: [{ priority: 10 }, { priority: 20 }] }, { name: "legacy", pathRules: [{ paths: ["/x"] }] }] },
};
const everySource = { versionedExpr: "SRC_IPS_V1", config: { srcIpRanges: ["*"] } };
const goodArmor: PolicyResource = {
  type: "gcp:compute/securityPolicy:SecurityPolicy",
  props: {
    rules: [
      { priority: 100, action: "deny(403)", match: { expr: { expression: "!request.path.startsWith('/inference.GRPCInferenceService/') && evaluatePreconfiguredWaf('sqli-v33-stable')" } } },
      { priority: 1000, action: "throttle", match: everySource, rateLimitOptions: { conformAction: "allow", exceedAction: "deny(429)" } },
      { priority: 2_147_483_647, action: "allow", match: everySource },
    ],
  },
};
const goodRepository: PolicyResource = {
  type: "gcp:artifactregistry/repository:Repository",
  props: { cleanupPolicies: [{ id: "keep", action: "KEEP", mostRecentVersions: { keepCount: 10 } }, { id: "old", action: "DELETE", condition: { olderThan: "2592000s" } }] },
};
const konnectivityAgents = { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } }, podSelector: { matchLabels: { "k8s-app": "konnectivity-agent" } } };
const webhookPorts = [{ protocol: "TCP", port: 6443 }, { protocol: "TCP", port: 10250 }];
const controlPlaneRule = { from: [{ ipBlock: { cidr: "172.16.0.0/28" } }], ports: webhookPorts };
const goodNetworkPolicy: PolicyResource = {
  type: "kubernetes:networking.k8s.io/v1:NetworkPolicy",
  props: {
    metadata: { name: "monitoring-internal-and-control-plane", namespace: "monitoring" },
    spec: { podSelector: {}, policyTypes: ["Ingress"], ingress: [{ from: [konnectivityAgents], ports: webhookPorts }, controlPlaneRule, { from: [{ ipBlock: { cidr: "35.191.0.0/16" } }] }] },
  },
};
const withIngress = (ingress: unknown[]): PolicyResource => withProps(goodNetworkPolicy, { spec: { podSelector: {}, policyTypes: ["Ingress"], ingress } });
const goodProjectGrant: PolicyResource = { type: "gcp:projects/iAMMember:IAMMember", props: { project: "p", role: "roles/container.defaultNodeServiceAccount", member: "serviceAccount:nodes@p.iam.gserviceaccount.com" } };
const compliantResources = [goodProjectGrant, goodCluster, goodGpuPool, goodFirewall, goodHttpsProxy, goodBackend, goodHealthCheck, goodUrlMap, goodArmor, goodRepository, goodNetworkPolicy];

const withNodeConfig = (resource: PolicyResource, nodeConfig: Record<string, unknown>): PolicyResource =>
  withProps(resource, { nodeConfig: { ...(resource.props["nodeConfig"] as object), ...nodeConfig } });

// Each rule, with resources it must reject and the message it gives.
const failingExamples: Record<string, [string, PolicyResource, RegExp][]> = {
  "no-public-ingress-to-nodes": [
    ["ingress from 0.0.0.0/0", withProps(goodFirewall, { sourceRanges: ["0.0.0.0/0"] }), /allows traffic from 0\.0\.0\.0\/0/],
    ["ingress from ::/0", withProps(goodFirewall, { sourceRanges: ["10.0.0.0/8", "::/0"] }), /allows traffic from ::\/0/],
    ["ingress with no source at all", withProps(goodFirewall, { sourceRanges: [] }), /treats as 0\.0\.0\.0\/0/],
  ],
  "gke-private-nodes": [
    ["a public-node cluster", withProps(goodCluster, { privateClusterConfig: undefined }), /enablePrivateNodes: true/],
    ["a pool opting out", withProps(goodGpuPool, { networkConfig: { enablePrivateNodes: false } }), /turns private nodes off/],
  ],
  "gke-workload-identity": [
    ["a cluster without a workload pool", withProps(goodCluster, { workloadIdentityConfig: undefined }), /workloadIdentityConfig\.workloadPool/],
    ["a pool exposing the node metadata", withNodeConfig(goodGpuPool, { workloadMetadataConfig: { mode: "GCE_METADATA" } }), /GKE_METADATA/],
  ],
  "gke-shielded-nodes": [
    ["a cluster without shielded nodes", withProps(goodCluster, { enableShieldedNodes: false }), /enableShieldedNodes: true/],
    ["a pool without secure boot", withNodeConfig(goodGpuPool, { shieldedInstanceConfig: { enableIntegrityMonitoring: true } }), /enableSecureBoot: true/],
  ],
  "no-default-compute-service-account": [
    ["a pool without a service account", withNodeConfig(goodGpuPool, { serviceAccount: undefined }), /Compute Engine default service account/],
    ["a cluster naming the default account", withNodeConfig(goodCluster, { serviceAccount: "123-compute@developer.gserviceaccount.com" }), /is the Compute Engine default service account/],
  ],
  "deletion-protection-in-production": [
    ["a prod cluster without protection", withProps(goodCluster, { deletionProtection: false }), /production cluster must set deletionProtection: true/],
  ],
  "gpu-pools-tainted": [
    ["a GPU pool without taints", withNodeConfig(goodGpuPool, { taints: [] }), /nvidia\.com\/gpu with effect NO_SCHEDULE/],
    ["a GPU pool with the wrong effect", withNodeConfig(goodGpuPool, { taints: [{ key: "nvidia.com/gpu", value: "present", effect: "PREFER_NO_SCHEDULE" }] }), /NO_SCHEDULE/],
  ],
  "https-with-ssl-policy": [
    ["an HTTPS proxy without an SSL policy", withProps(goodHttpsProxy, { sslPolicy: undefined }), /must set sslPolicy/],
  ],
  "internet-backends-behind-cloud-armor": [
    ["an external backend service without Cloud Armor", withProps(goodBackend, { securityPolicy: undefined }), /must set securityPolicy/],
    ["a classic external backend service without Cloud Armor", withProps(goodBackend, { loadBalancingScheme: undefined, securityPolicy: undefined }), /must set securityPolicy/],
  ],
  "no-project-wide-service-account-user": [
    ["serviceAccountUser on the project (issue 39, item 4)", { type: "gcp:projects/iAMMember:IAMMember", props: { project: "p", role: "roles/iam.serviceAccountUser", member: "serviceAccount:deployer@p.iam.gserviceaccount.com" } }, /roles\/iam\.serviceAccountUser granted on project p/],
    ["token creator for a group of members", { type: "gcp:projects/iAMBinding:IAMBinding", props: { project: "p", role: "roles/iam.serviceAccountTokenCreator", members: ["group:ops@example.com"] } }, /serviceAccountTokenCreator granted on project p/],
  ],
  // The APIs' own cross-field rules (infra/policy/gke-api-rules.ts).
  "gke-private-endpoint-needs-authorized-networks": [
    ["a private endpoint without authorized networks (issue 23, item 1)", withProps(goodCluster, { masterAuthorizedNetworksConfig: undefined }), /Master authorized networks must be enabled/],
    ["a private endpoint with the IP endpoints still on", withProps(goodCluster, { masterAuthorizedNetworksConfig: undefined, controlPlaneEndpointsConfig: { ipEndpointsConfig: { enabled: true } } }), /needs masterAuthorizedNetworksConfig/],
  ],
  "gke-node-pool-autoscaling-limits": [
    ["per-zone and total limits mixed", withProps(goodGpuPool, { autoscaling: { minNodeCount: 0, totalMaxNodeCount: 3 } }), /mixes per-zone/],
    ["a minimum above the maximum", withProps(goodGpuPool, { autoscaling: { totalMinNodeCount: 4, totalMaxNodeCount: 3 } }), /minimum 4 is above its maximum 3/],
  ],
  "gke-gcs-fuse-needs-workload-identity": [
    ["the FUSE driver without Workload Identity", withProps(goodCluster, { workloadIdentityConfig: undefined }), /gcsFuseCsiDriverConfig needs workloadIdentityConfig/],
  ],
  "gke-dcgm-needs-managed-prometheus": [
    ["DCGM without managed Prometheus", withProps(goodCluster, { monitoringConfig: { enableComponents: ["DCGM"] } }), /DCGM needs managedPrometheus/],
  ],
  "gke-dataplane-v2-without-network-policy-addon": [
    ["Dataplane V2 with Calico", withProps(goodCluster, { networkPolicy: { enabled: true, provider: "CALICO" } }), /cannot be combined with the networkPolicy/],
  ],
  "gke-t4-on-n1-machine-types": [
    ["a T4 on an N2", withNodeConfig(goodGpuPool, { machineType: "n2-standard-4" }), /needs an N1 machine type, not n2-standard-4/],
    ["three T4s per VM", withNodeConfig(goodGpuPool, { guestAccelerators: [{ type: "nvidia-tesla-t4", count: 3 }] }), /count 3 is not 1, 2 or 4/],
  ],
  "gke-latest-gpu-driver-needs-cos": [
    ["LATEST on Ubuntu", withNodeConfig(goodGpuPool, { imageType: "UBUNTU_CONTAINERD", gcfsConfig: undefined }), /LATEST needs a COS image type, not UBUNTU_CONTAINERD/],
  ],
  "gke-image-streaming-needs-cos-containerd": [
    ["image streaming on Ubuntu", withNodeConfig(goodGpuPool, { imageType: "UBUNTU_CONTAINERD", guestAccelerators: [] }), /needs imageType COS_CONTAINERD/],
  ],
  "gke-surge-upgrade-makes-progress": [
    ["surge 0 and unavailable 0", withProps(goodGpuPool, { upgradeSettings: { maxSurge: 0, maxUnavailable: 0 } }), /both 0/],
  ],
  "health-check-timeout-within-interval": [
    ["a timeout longer than the interval", withProps(goodHealthCheck, { timeoutSec: 10 }), /timeoutSec 10 is greater than checkIntervalSec 5/],
  ],
  "neg-backends-balanced-by-rate-or-connection": [
    ["a NEG with the UTILIZATION default", withProps(goodBackend, { backends: [{ group: NEG }] }), /UTILIZATION balancing/],
    ["a NEG balanced by RATE with no capacity", withProps(goodBackend, { backends: [{ group: NEG, balancingMode: "RATE" }] }), /without maxRate or maxRatePerEndpoint/],
  ],
  "url-map-path-matcher-rules": [
    ["pathRules and routeRules together", withProps(goodUrlMap, { pathMatchers: [{ name: "api", pathRules: [{ paths: ["/a"] }], routeRules: [{ priority: 1 }] }] }), /sets both pathRules and routeRules/],
    ["a repeated route priority", withProps(goodUrlMap, { pathMatchers: [{ name: "api", routeRules: [{ priority: 10 }, { priority: 10 }] }] }), /repeats route priorities 10/],
  ],
  "cloud-armor-rule-shape": [
    ["a throttle without rate limit options", withProps(goodArmor, { rules: [{ priority: 1000, action: "throttle", match: everySource }] }), /needs rateLimitOptions/],
    ["rate limit options on a deny rule", withProps(goodArmor, { rules: [{ priority: 1, action: "deny(403)", match: everySource, rateLimitOptions: {} }] }), /takes none/],
    ["six subexpressions", withProps(goodArmor, { rules: [{ priority: 1, action: "deny(403)", match: { expr: { expression: "a && b && c && d || e && f" } } }] }), /6 subexpressions/],
  ],
  "artifact-registry-cleanup-policies": [
    ["mostRecentVersions on a DELETE policy", withProps(goodRepository, { cleanupPolicies: [{ id: "x", action: "DELETE", mostRecentVersions: { keepCount: 1 } }] }), /needs action KEEP/],
    ["a policy that matches nothing", withProps(goodRepository, { cleanupPolicies: [{ id: "x", action: "DELETE" }] }), /neither a condition nor mostRecentVersions/],
  ],
  "gke-control-plane-ingress-through-konnectivity": [
    ["the control-plane range alone (issue 39, item 1: the HPA's metrics API cut off)", withIngress([controlPlaneRule]), /control plane \(172\.16\.0\.0\/28\) on TCP\/6443, TCP\/10250 has no rule admitting pods labelled k8s-app: konnectivity-agent/],
    ["Konnectivity admitted on fewer ports", withIngress([{ from: [konnectivityAgents], ports: webhookPorts.slice(0, 1) }, controlPlaneRule]), /konnectivity-agent/],
    ["every port from the control plane, some from Konnectivity", withIngress([{ from: [konnectivityAgents], ports: webhookPorts }, { from: [{ ipBlock: { cidr: "172.16.0.0/28" } }] }]), /on every port has no rule/],
    ["the agents' labels without their namespace", withIngress([{ from: [{ podSelector: konnectivityAgents.podSelector }] }, controlPlaneRule]), /konnectivity-agent/],
  ],
};

function policy(name: string) {
  const found = infraPolicies.find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`no policy ${name}`);
  return found;
}

describe("infra policies", () => {
  it("has a failing example for every rule", () => {
    expect(Object.keys(failingExamples).sort()).toEqual(infraPolicies.map((rule) => rule.name).sort());
  });

  describe.each(Object.entries(failingExamples))("%s", (name, examples) => {
    it.each(examples)("rejects %s", (_case, resource, message) => {
      const violations = policy(name).check(resource);
      expect(violations).toHaveLength(1);
      expect(violations[0]).toMatch(message);
    });

    it("accepts compliant resources", () => {
      for (const resource of compliantResources) expect(policy(name).check(resource)).toEqual([]);
    });
  });

  it("accepts a private endpoint whose IP endpoints are off instead of authorized networks", () => {
    const dnsOnly = withProps(goodCluster, { masterAuthorizedNetworksConfig: undefined, controlPlaneEndpointsConfig: { ipEndpointsConfig: { enabled: false } } });
    expect(policy("gke-private-endpoint-needs-authorized-networks").check(dnsOnly)).toEqual([]);
  });

  it("does not apply deletion protection to clusters outside production", () => {
    const devCluster = withProps(goodCluster, { resourceLabels: { environment: "dev" }, deletionProtection: false });
    expect(policy("deletion-protection-in-production").check(devCluster)).toEqual([]);
  });

  it("does not ask internal backend services for Cloud Armor", () => {
    expect(policy("internet-backends-behind-cloud-armor").check(withProps(goodBackend, { loadBalancingScheme: "INTERNAL_MANAGED", securityPolicy: undefined }))).toEqual([]);
  });

  it("does not require a taint on pools without GPUs", () => {
    const cpuPool = withNodeConfig(goodGpuPool, { guestAccelerators: undefined, taints: [] });
    expect(policy("gpu-pools-tainted").check(cpuPool)).toEqual([]);
  });

  it("accepts Konnectivity admitted on every port, and policies that do not admit the control plane", () => {
    const rule = policy("gke-control-plane-ingress-through-konnectivity");
    expect(rule.check(withIngress([{ from: [konnectivityAgents] }, controlPlaneRule]))).toEqual([]);
    expect(rule.check(withIngress([{ from: [{ ipBlock: { cidr: "130.211.0.0/22" } }], ports: webhookPorts }]))).toEqual([]);
  });

  it("reports each violation to Pulumi's policy engine as a resource validation", () => {
    const [firewallPolicy] = toResourceValidationPolicies(infraPolicies.filter((rule) => rule.name === "no-public-ingress-to-nodes"));
    expect(firewallPolicy).toMatchObject({ name: "no-public-ingress-to-nodes", enforcementLevel: "mandatory" });
    const reported: string[] = [];
    const args = { type: FIREWALL, props: { sourceRanges: ["0.0.0.0/0"], allows: [{ protocol: "tcp" }] } } as unknown as ResourceValidationArgs;
    const validate = firewallPolicy?.validateResource;
    if (typeof validate !== "function") throw new Error("expected one validateResource function");
    void validate(args, (message) => reported.push(message));
    expect(reported).toEqual(["ingress firewall allows traffic from 0.0.0.0/0"]);
  });
});

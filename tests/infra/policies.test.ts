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
    privateClusterConfig: { enablePrivateNodes: true },
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
    nodeConfig: {
      ...goodNodeConfig,
      guestAccelerators: [{ type: "nvidia-tesla-t4", count: 1 }],
      taints: [{ key: "nvidia.com/gpu", value: "present", effect: "NO_SCHEDULE" }],
    },
  },
};
const goodFirewall: PolicyResource = { type: FIREWALL, props: { sourceRanges: ["35.191.0.0/16"], allows: [{ protocol: "tcp", ports: ["8000"] }] } };
const goodHttpsProxy: PolicyResource = { type: "gcp:compute/targetHttpsProxy:TargetHttpsProxy", props: { urlMap: "m", sslPolicy: "p" } };
const goodBackend: PolicyResource = { type: "gcp:compute/backendService:BackendService", props: { loadBalancingScheme: "EXTERNAL_MANAGED", securityPolicy: "armor" } };

const withProps = (resource: PolicyResource, props: Record<string, unknown>): PolicyResource => ({ type: resource.type, props: { ...resource.props, ...props } });
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
      for (const resource of [goodCluster, goodGpuPool, goodFirewall, goodHttpsProxy, goodBackend]) expect(policy(name).check(resource)).toEqual([]);
    });
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

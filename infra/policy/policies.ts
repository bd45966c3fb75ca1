import { gkeApiRules } from "./gke-api-rules";
import { at, type InfraPolicy, list, nodeConfigOf, resourceTypes } from "./policy-model";

export type { InfraPolicy, PolicyResource } from "./policy-model";

const { cluster: CLUSTER, nodePool: NODE_POOL, firewall: FIREWALL, httpsProxy: HTTPS_PROXY, backendService: BACKEND_SERVICE } = resourceTypes;

const ANYWHERE = new Set(["0.0.0.0/0", "::/0"]);

const noPublicIngressToNodes: InfraPolicy = {
  name: "no-public-ingress-to-nodes",
  description: "Firewall rules never admit traffic from anywhere (0.0.0.0/0 or ::/0); nodes take only load-balancer and control-plane traffic.",
  enforcementLevel: "mandatory",
  check({ type, props }) {
    if (type !== FIREWALL || (props["direction"] ?? "INGRESS") !== "INGRESS" || list(props["allows"]).length === 0) return [];
    const sources = list(props["sourceRanges"]);
    if (sources.some((range) => ANYWHERE.has(String(range)))) return [`ingress firewall allows traffic from ${sources.filter((range) => ANYWHERE.has(String(range))).join(", ")}`];
    // GCP reads an ingress rule without any source as 0.0.0.0/0.
    if (sources.length === 0 && list(props["sourceTags"]).length === 0 && list(props["sourceServiceAccounts"]).length === 0) {
      return ["ingress firewall has no source ranges, tags or service accounts, which GCP treats as 0.0.0.0/0"];
    }
    return [];
  },
};

const privateNodes: InfraPolicy = {
  name: "gke-private-nodes",
  description: "GKE nodes have no external IP addresses.",
  enforcementLevel: "mandatory",
  check({ type, props }) {
    if (type === CLUSTER && at(props, "privateClusterConfig", "enablePrivateNodes") !== true) return ["cluster must set privateClusterConfig.enablePrivateNodes: true"];
    if (type === NODE_POOL && at(props, "networkConfig", "enablePrivateNodes") === false) return ["node pool turns private nodes off (networkConfig.enablePrivateNodes: false)"];
    return [];
  },
};

const workloadIdentity: InfraPolicy = {
  name: "gke-workload-identity",
  description: "Workload Identity is on: pods get Google credentials only through their Kubernetes service account, never the node's.",
  enforcementLevel: "mandatory",
  check(resource) {
    if (resource.type === CLUSTER && !at(resource.props, "workloadIdentityConfig", "workloadPool")) return ["cluster must set workloadIdentityConfig.workloadPool (<project>.svc.id.goog)"];
    if (resource.type === NODE_POOL && at(nodeConfigOf(resource), "workloadMetadataConfig", "mode") !== "GKE_METADATA") {
      return ["node pool must set nodeConfig.workloadMetadataConfig.mode: GKE_METADATA"];
    }
    return [];
  },
};

const shieldedNodes: InfraPolicy = {
  name: "gke-shielded-nodes",
  description: "Nodes are Shielded VMs with secure boot and integrity monitoring.",
  enforcementLevel: "mandatory",
  check(resource) {
    const violations: string[] = [];
    if (resource.type === CLUSTER && resource.props["enableShieldedNodes"] !== true) violations.push("cluster must set enableShieldedNodes: true");
    if (resource.type === NODE_POOL) {
      const shielded = at(nodeConfigOf(resource), "shieldedInstanceConfig");
      if (at(shielded, "enableSecureBoot") !== true) violations.push("node pool must set nodeConfig.shieldedInstanceConfig.enableSecureBoot: true");
      if (at(shielded, "enableIntegrityMonitoring") === false) violations.push("node pool turns integrity monitoring off");
    }
    return violations;
  },
};

const noDefaultComputeServiceAccount: InfraPolicy = {
  name: "no-default-compute-service-account",
  description: "Nodes run as a dedicated service account, never the Compute Engine default one (project Editor by default).",
  enforcementLevel: "mandatory",
  check(resource) {
    if (resource.type !== CLUSTER && resource.type !== NODE_POOL) return [];
    const account = at(nodeConfigOf(resource), "serviceAccount");
    if (account === undefined || account === "" || account === "default") return ["nodeConfig.serviceAccount is unset, so nodes would run as the Compute Engine default service account"];
    if (String(account).endsWith("-compute@developer.gserviceaccount.com")) return [`nodeConfig.serviceAccount ${String(account)} is the Compute Engine default service account`];
    return [];
  },
};

const productionDeletionProtection: InfraPolicy = {
  name: "deletion-protection-in-production",
  description: "Clusters labelled environment=prod have deletion protection on.",
  enforcementLevel: "mandatory",
  check({ type, props }) {
    if (type !== CLUSTER || at(props, "resourceLabels", "environment") !== "prod") return [];
    return props["deletionProtection"] === true ? [] : ["production cluster must set deletionProtection: true"];
  },
};

const gpuPoolsTainted: InfraPolicy = {
  name: "gpu-pools-tainted",
  description: "Node pools with GPUs carry the nvidia.com/gpu NoSchedule taint, so only GPU workloads land on (and pay for) them.",
  enforcementLevel: "mandatory",
  check(resource) {
    if (resource.type !== NODE_POOL) return [];
    const nodeConfig = nodeConfigOf(resource);
    if (!list(at(nodeConfig, "guestAccelerators")).some((accelerator) => Number(at(accelerator, "count")) > 0)) return [];
    const tainted = list(at(nodeConfig, "taints")).some((taint) => at(taint, "key") === "nvidia.com/gpu" && at(taint, "effect") === "NO_SCHEDULE");
    return tainted ? [] : ["GPU node pool must carry the taint nvidia.com/gpu with effect NO_SCHEDULE"];
  },
};

const httpsWithSslPolicy: InfraPolicy = {
  name: "https-with-ssl-policy",
  description: "HTTPS proxies carry an SSL policy; without one the load balancer accepts TLS 1.0 and weak ciphers.",
  enforcementLevel: "mandatory",
  check({ type, props }) {
    return type === HTTPS_PROXY && !props["sslPolicy"] ? ["HTTPS proxy must set sslPolicy (e.g. profile MODERN, minTlsVersion TLS_1_2)"] : [];
  },
};

const internetBackendsBehindCloudArmor: InfraPolicy = {
  name: "internet-backends-behind-cloud-armor",
  description: "Backend services of external load balancers have a Cloud Armor security policy.",
  enforcementLevel: "mandatory",
  check({ type, props }) {
    if (type !== BACKEND_SERVICE || !String(props["loadBalancingScheme"] ?? "EXTERNAL").startsWith("EXTERNAL")) return [];
    return props["securityPolicy"] ? [] : ["external backend service must set securityPolicy (Cloud Armor)"];
  },
};

// Roles that let their holder act as, or mint tokens for, a service account (IAM docs, "Roles for service account
// authentication": granted on a project, they apply to every service account in it,
// https://cloud.google.com/iam/docs/service-account-permissions#user-role).
const ACT_AS_ROLES = new Set(["roles/iam.serviceAccountUser", "roles/iam.serviceAccountTokenCreator"]);

const noProjectWideServiceAccountUser: InfraPolicy = {
  name: "no-project-wide-service-account-user",
  description: "serviceAccountUser and serviceAccountTokenCreator are granted on single service accounts, never on the project: a project-wide grant acts as every account in it.",
  enforcementLevel: "mandatory",
  check({ type, props }) {
    if ((type !== resourceTypes.projectIamMember && type !== resourceTypes.projectIamBinding) || !ACT_AS_ROLES.has(String(props["role"]))) return [];
    return [`${String(props["role"])} granted on project ${String(props["project"] ?? "(provider default)")}: grant it on the service accounts that need it (gcp.serviceaccount.IAMMember)`];
  },
};

/** The stack's own guardrails (security and cost), beyond what the APIs enforce. */
const guardrails: readonly InfraPolicy[] = [
  noPublicIngressToNodes,
  privateNodes,
  workloadIdentity,
  shieldedNodes,
  noDefaultComputeServiceAccount,
  productionDeletionProtection,
  gpuPoolsTainted,
  httpsWithSslPolicy,
  internetBackendsBehindCloudArmor,
  noProjectWideServiceAccountUser,
];

/** Every rule of the policy pack, in the order they are reported: the guardrails, then the APIs' own rules. */
export const infraPolicies: readonly InfraPolicy[] = [...guardrails, ...gkeApiRules];

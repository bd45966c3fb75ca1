import { at, type InfraPolicy, list, nodeConfigOf, resourceTypes as T } from "./policy-model";

// Cross-field rules the GKE, Compute Engine and Artifact Registry APIs enforce at create/update time. Pulumi's
// mocks (and `pulumi preview`) accept any combination of these fields, so without these rules a broken
// combination first shows up as an HTTP 400 in the middle of `pulumi up`. Each rule cites where the API's rule
// is stated: the provider's own code or docs (hashicorp/terraform-provider-google, generated from
// GoogleCloudPlatform/magic-modules, and re-published as @pulumi/gcp's doc comments) or Google's product docs.

/** Where the GKE API gets this wrong most visibly: the first `pulumi up` stops at the cluster create. */
const privateEndpointNeedsAuthorizedNetworks: InfraPolicy = {
  name: "gke-private-endpoint-needs-authorized-networks",
  // Sources:
  // - GKE API error "Master authorized networks must be enabled if private endpoint is enabled" (quoted in
  //   rancher/rancher#32251; GoogleCloudPlatform/magic-modules PR 8338).
  // - terraform-provider-google google/services/container/resource_container_cluster.go,
  //   expandMasterAuthorizedNetworksConfig: without a master_authorized_networks_config block the provider sends
  //   `enabled: false` explicitly ("The GKE API pays attention to the field presence").
  // - terraform-google-modules/terraform-google-kubernetes-engine autogen/main/cluster.tf.tmpl emits an empty
  //   master_authorized_networks_config whenever enable_private_endpoint is set (PR 2058, PR 2217).
  description: "A cluster with privateClusterConfig.enablePrivateEndpoint has masterAuthorizedNetworksConfig (or turns the IP endpoints off with controlPlaneEndpointsConfig.ipEndpointsConfig.enabled: false); GKE refuses the create otherwise.",
  enforcementLevel: "mandatory",
  check({ type, props }) {
    if (type !== T.cluster || at(props, "privateClusterConfig", "enablePrivateEndpoint") !== true) return [];
    if (at(props, "controlPlaneEndpointsConfig", "ipEndpointsConfig", "enabled") === false) return [];
    return typeof props["masterAuthorizedNetworksConfig"] === "object" && props["masterAuthorizedNetworksConfig"] !== null
      ? []
      : ["privateClusterConfig.enablePrivateEndpoint needs masterAuthorizedNetworksConfig (it may list no CIDR); GKE answers 400 \"Master authorized networks must be enabled if private endpoint is enabled\""];
  },
};

const nodePoolAutoscalingLimits: InfraPolicy = {
  name: "gke-node-pool-autoscaling-limits",
  // Source: @pulumi/gcp NodePoolAutoscaling (from terraform-provider-google resource_container_node_pool.go,
  // whose schema marks the two pairs ConflictsWith): totalMin/totalMaxNodeCount "Cannot be used with per zone
  // limits", minNodeCount "Must be >=0 and <= max_node_count", totalMinNodeCount "<= total_max_node_count".
  description: "Node pool autoscaling uses either per-zone or total limits, never both, with min <= max.",
  enforcementLevel: "mandatory",
  check({ type, props }) {
    if (type !== T.nodePool) return [];
    const autoscaling = props["autoscaling"];
    if (typeof autoscaling !== "object" || autoscaling === null) return [];
    const value = (key: string) => at(autoscaling, key) as number | undefined;
    const perZone = value("minNodeCount") !== undefined || value("maxNodeCount") !== undefined;
    const total = value("totalMinNodeCount") !== undefined || value("totalMaxNodeCount") !== undefined;
    if (perZone && total) return ["autoscaling mixes per-zone (min/maxNodeCount) and total (totalMin/totalMaxNodeCount) limits"];
    const [min, max] = total ? [value("totalMinNodeCount"), value("totalMaxNodeCount")] : [value("minNodeCount"), value("maxNodeCount")];
    return min !== undefined && max !== undefined && min > max ? [`autoscaling minimum ${min} is above its maximum ${max}`] : [];
  },
};

const gcsFuseNeedsWorkloadIdentity: InfraPolicy = {
  name: "gke-gcs-fuse-needs-workload-identity",
  // Source: GKE docs, "Access Cloud Storage buckets with the Cloud Storage FUSE CSI driver" (prerequisites:
  // Workload Identity Federation for GKE enabled on the cluster), https://cloud.google.com/kubernetes-engine/docs/how-to/persistent-volumes/cloud-storage-fuse-csi-driver-setup
  description: "The Cloud Storage FUSE CSI driver runs only on clusters with Workload Identity.",
  enforcementLevel: "mandatory",
  check({ type, props }) {
    if (type !== T.cluster || at(props, "addonsConfig", "gcsFuseCsiDriverConfig", "enabled") !== true) return [];
    return at(props, "workloadIdentityConfig", "workloadPool") ? [] : ["addonsConfig.gcsFuseCsiDriverConfig needs workloadIdentityConfig.workloadPool"];
  },
};

const dcgmNeedsManagedPrometheus: InfraPolicy = {
  name: "gke-dcgm-needs-managed-prometheus",
  // Source: GKE docs, "Collect and view DCGM metrics" (DCGM metrics require Google Cloud Managed Service for
  // Prometheus managed collection on the cluster), https://cloud.google.com/kubernetes-engine/docs/how-to/dcgm-metrics
  description: "monitoringConfig.enableComponents DCGM needs monitoringConfig.managedPrometheus.enabled.",
  enforcementLevel: "mandatory",
  check({ type, props }) {
    if (type !== T.cluster || !list(at(props, "monitoringConfig", "enableComponents")).includes("DCGM")) return [];
    return at(props, "monitoringConfig", "managedPrometheus", "enabled") === true ? [] : ["monitoringConfig DCGM needs managedPrometheus.enabled: true"];
  },
};

const dataplaneV2WithoutNetworkPolicyAddon: InfraPolicy = {
  name: "gke-dataplane-v2-without-network-policy-addon",
  // Source: GKE docs, "Use GKE Dataplane V2" (network policy enforcement is built into Dataplane V2; the Calico
  // network policy add-on cannot be enabled with it), https://cloud.google.com/kubernetes-engine/docs/how-to/dataplane-v2
  description: "Clusters on ADVANCED_DATAPATH (Dataplane V2, which enforces NetworkPolicy itself) do not enable the Calico networkPolicy add-on.",
  enforcementLevel: "mandatory",
  check({ type, props }) {
    if (type !== T.cluster || props["datapathProvider"] !== "ADVANCED_DATAPATH") return [];
    const calico = at(props, "networkPolicy", "enabled") === true || at(props, "addonsConfig", "networkPolicyConfig", "disabled") === false;
    return calico ? ["datapathProvider ADVANCED_DATAPATH cannot be combined with the networkPolicy (Calico) add-on"] : [];
  },
};

// Source: Compute Engine docs, "GPU machine types" (NVIDIA T4: N1 general-purpose machine types, 1, 2 or 4 GPUs
// per VM), https://cloud.google.com/compute/docs/gpus#t4-gpus
const T4_GPU_COUNTS = new Set([1, 2, 4]);

const t4OnN1MachineTypes: InfraPolicy = {
  name: "gke-t4-on-n1-machine-types",
  description: "nvidia-tesla-t4 attaches only to N1 machine types, 1, 2 or 4 per VM.",
  enforcementLevel: "mandatory",
  check(resource) {
    const nodeConfig = nodeConfigOf(resource);
    const t4s = list(at(nodeConfig, "guestAccelerators")).filter((accelerator) => at(accelerator, "type") === "nvidia-tesla-t4");
    const violations: string[] = [];
    if (t4s.length > 0 && !String(at(nodeConfig, "machineType") ?? "").startsWith("n1-")) {
      violations.push(`nvidia-tesla-t4 needs an N1 machine type, not ${String(at(nodeConfig, "machineType") ?? "the default e2-medium")}`);
    }
    for (const t4 of t4s) {
      if (!T4_GPU_COUNTS.has(Number(at(t4, "count")))) violations.push(`nvidia-tesla-t4 count ${String(at(t4, "count"))} is not 1, 2 or 4`);
    }
    return violations;
  },
};

const latestGpuDriverNeedsCos: InfraPolicy = {
  name: "gke-latest-gpu-driver-needs-cos",
  // Source: GKE docs, "Run GPUs in GKE Standard node pools" (gpu-driver-version LATEST is available on
  // Container-Optimized OS only), https://cloud.google.com/kubernetes-engine/docs/how-to/gpus#create-gpu-pool-auto-drivers;
  // the API's values: @pulumi/gcp ...GuestAcceleratorGpuDriverInstallationConfig.gpuDriverVersion.
  description: "GPU driver version LATEST is installed only on Container-Optimized OS nodes.",
  enforcementLevel: "mandatory",
  check(resource) {
    const nodeConfig = nodeConfigOf(resource);
    const latest = list(at(nodeConfig, "guestAccelerators")).some((accelerator) => at(accelerator, "gpuDriverInstallationConfig", "gpuDriverVersion") === "LATEST");
    const imageType = String(at(nodeConfig, "imageType") ?? "COS_CONTAINERD");
    return latest && !imageType.startsWith("COS") ? [`gpuDriverVersion LATEST needs a COS image type, not ${imageType}`] : [];
  },
};

const imageStreamingNeedsCosContainerd: InfraPolicy = {
  name: "gke-image-streaming-needs-cos-containerd",
  // Source: GKE docs, "Use Image streaming to pull container images" (requirements: Container-Optimized OS
  // with containerd node image), https://cloud.google.com/kubernetes-engine/docs/how-to/image-streaming
  description: "Image streaming (nodeConfig.gcfsConfig) runs on COS_CONTAINERD nodes only.",
  enforcementLevel: "mandatory",
  check(resource) {
    const nodeConfig = nodeConfigOf(resource);
    if (at(nodeConfig, "gcfsConfig", "enabled") !== true) return [];
    const imageType = String(at(nodeConfig, "imageType") ?? "COS_CONTAINERD");
    return imageType === "COS_CONTAINERD" ? [] : [`gcfsConfig (image streaming) needs imageType COS_CONTAINERD, not ${imageType}`];
  },
};

const surgeUpgradeNeedsProgress: InfraPolicy = {
  name: "gke-surge-upgrade-makes-progress",
  // Source: GKE docs, "Node pool upgrade strategies", surge upgrades (maxSurge and maxUnavailable cannot both
  // be 0), https://cloud.google.com/kubernetes-engine/docs/concepts/node-pool-upgrade-strategies#surge
  description: "A node pool's surge upgrade settings let an upgrade make progress: maxSurge + maxUnavailable >= 1.",
  enforcementLevel: "mandatory",
  check({ type, props }) {
    if (type !== T.nodePool) return [];
    const settings = props["upgradeSettings"];
    if (typeof settings !== "object" || settings === null || (at(settings, "strategy") ?? "SURGE") !== "SURGE") return [];
    const surge = Number(at(settings, "maxSurge") ?? 0) + Number(at(settings, "maxUnavailable") ?? 0);
    return surge >= 1 ? [] : ["upgradeSettings.maxSurge and maxUnavailable are both 0"];
  },
};

const healthCheckTimeoutWithinInterval: InfraPolicy = {
  name: "health-check-timeout-within-interval",
  // Source: @pulumi/gcp compute/healthCheck.d.ts timeoutSec (Compute API healthChecks reference): "It is invalid
  // for timeoutSec to have greater value than checkIntervalSec." Both default to 5.
  description: "A health check's timeoutSec is not greater than its checkIntervalSec.",
  enforcementLevel: "mandatory",
  check({ type, props }) {
    if (type !== T.healthCheck) return [];
    const timeout = Number(props["timeoutSec"] ?? 5);
    const interval = Number(props["checkIntervalSec"] ?? 5);
    return timeout > interval ? [`timeoutSec ${timeout} is greater than checkIntervalSec ${interval}`] : [];
  },
};

const negBackendsBalancedByRate: InfraPolicy = {
  name: "neg-backends-balanced-by-rate-or-connection",
  // Source: Cloud Load Balancing docs, "Backend services overview", balancing mode: zonal NEGs
  // (GCE_VM_IP_PORT) behind an Application Load Balancer support RATE or CONNECTION, not UTILIZATION, and RATE
  // needs a target capacity (maxRate or maxRatePerEndpoint), https://cloud.google.com/load-balancing/docs/backend-service#balancing-mode
  description: "Backends that are network endpoint groups use RATE (with maxRate or maxRatePerEndpoint) or CONNECTION balancing, never UTILIZATION.",
  enforcementLevel: "mandatory",
  check({ type, props }) {
    if (type !== T.backendService) return [];
    return list(props["backends"]).flatMap((backend) => {
      if (!String(at(backend, "group") ?? "").includes("/networkEndpointGroups/")) return [];
      const mode = String(at(backend, "balancingMode") ?? "UTILIZATION");
      if (mode === "UTILIZATION") return [`NEG backend ${String(at(backend, "group"))} uses UTILIZATION balancing (the API default), which NEGs do not support`];
      if (mode === "RATE" && at(backend, "maxRate") === undefined && at(backend, "maxRatePerEndpoint") === undefined) {
        return [`NEG backend ${String(at(backend, "group"))} balances by RATE without maxRate or maxRatePerEndpoint`];
      }
      return [];
    });
  },
};

const urlMapPathMatcherRules: InfraPolicy = {
  name: "url-map-path-matcher-rules",
  // Source: @pulumi/gcp URLMapPathMatcher (Compute API urlMaps reference): "Within a given pathMatcher, only one
  // of pathRules or routeRules must be set"; routeRules.priority: "You cannot configure two or more routeRules
  // with the same priority ... between 0 and 2147483647 inclusive."
  description: "Each URL map path matcher uses pathRules or routeRules (not both), with unique route priorities in 0..2147483647.",
  enforcementLevel: "mandatory",
  check({ type, props }) {
    if (type !== T.urlMap) return [];
    return list(props["pathMatchers"]).flatMap((matcher) => {
      const name = String(at(matcher, "name"));
      const violations: string[] = [];
      const routeRules = list(at(matcher, "routeRules"));
      if (routeRules.length > 0 && list(at(matcher, "pathRules")).length > 0) violations.push(`path matcher ${name} sets both pathRules and routeRules`);
      const priorities = routeRules.map((rule) => Number(at(rule, "priority")));
      const duplicates = [...new Set(priorities.filter((priority, index) => priorities.indexOf(priority) !== index))];
      if (duplicates.length > 0) violations.push(`path matcher ${name} repeats route priorities ${duplicates.join(", ")}`);
      const outOfRange = priorities.filter((priority) => !Number.isInteger(priority) || priority < 0 || priority > 2_147_483_647);
      if (outOfRange.length > 0) violations.push(`path matcher ${name} has route priorities outside 0..2147483647: ${outOfRange.join(", ")}`);
      return violations;
    });
  },
};

// Cloud Armor's limit on one advanced match condition: "an expression with up to five subexpressions" (Cloud
// Armor docs, "Configure custom rules language attributes", https://cloud.google.com/armor/docs/rules-language-reference).
const MAX_ARMOR_SUBEXPRESSIONS = 5;
const RATE_LIMITED_ACTIONS = new Set(["throttle", "rate_based_ban"]);

const cloudArmorRuleShape: InfraPolicy = {
  name: "cloud-armor-rule-shape",
  // Sources: @pulumi/gcp SecurityPolicyRule (Compute API securityPolicies reference): rateLimitOptions "Must be
  // specified if the action is "rateBasedBan" or "throttle". Cannot be specified for any other actions.";
  // priority "between 0 and 2147483647"; the subexpression limit above.
  description: "Cloud Armor rules: rateLimitOptions exactly on throttle/rate_based_ban rules, priorities in range, expressions of at most five subexpressions.",
  enforcementLevel: "mandatory",
  check({ type, props }) {
    if (type !== T.securityPolicy) return [];
    return list(props["rules"]).flatMap((rule) => {
      const priority = Number(at(rule, "priority"));
      const action = String(at(rule, "action"));
      const violations: string[] = [];
      const limited = at(rule, "rateLimitOptions") !== undefined;
      if (RATE_LIMITED_ACTIONS.has(action) && !limited) violations.push(`rule ${priority}: action ${action} needs rateLimitOptions`);
      if (!RATE_LIMITED_ACTIONS.has(action) && limited) violations.push(`rule ${priority}: rateLimitOptions on action ${action}, which takes none`);
      if (!Number.isInteger(priority) || priority < 0 || priority > 2_147_483_647) violations.push(`rule priority ${String(at(rule, "priority"))} is outside 0..2147483647`);
      const expression = at(rule, "match", "expr", "expression");
      if (typeof expression === "string") {
        const subexpressions = expression.split(/&&|\|\|/).length;
        if (subexpressions > MAX_ARMOR_SUBEXPRESSIONS) violations.push(`rule ${priority}: ${subexpressions} subexpressions, Cloud Armor allows ${MAX_ARMOR_SUBEXPRESSIONS}`);
      }
      return violations;
    });
  },
};

const artifactRegistryCleanupPolicies: InfraPolicy = {
  name: "artifact-registry-cleanup-policies",
  // Source: @pulumi/gcp RepositoryCleanupPolicy (Artifact Registry API): mostRecentVersions "May only be
  // specified with a Keep action"; Artifact Registry docs, "Configure cleanup policies" (a policy has a
  // condition or most-recent-versions), https://cloud.google.com/artifact-registry/docs/repositories/cleanup-policy
  description: "Artifact Registry cleanup policies: mostRecentVersions only on KEEP, and every policy says which versions it matches.",
  enforcementLevel: "mandatory",
  check({ type, props }) {
    if (type !== T.artifactRepository) return [];
    return list(props["cleanupPolicies"]).flatMap((policy) => {
      const id = String(at(policy, "id"));
      const mostRecent = at(policy, "mostRecentVersions") !== undefined;
      if (mostRecent && at(policy, "action") !== "KEEP") return [`cleanup policy ${id}: mostRecentVersions needs action KEEP`];
      if (!mostRecent && at(policy, "condition") === undefined) return [`cleanup policy ${id} has neither a condition nor mostRecentVersions`];
      return [];
    });
  },
};

/** The pods GKE's control plane reaches the cluster through, where it uses Konnectivity. */
export const KONNECTIVITY_AGENT = { namespace: "kube-system", podLabels: { "k8s-app": "konnectivity-agent" } } as const;

// GKE's private-cluster control-plane range (masterIpv4CidrBlock) is always a /28 (@pulumi/gcp
// ClusterPrivateClusterConfig.masterIpv4CidrBlock: "This field must be a /28"); the stack's other ipBlock peers (the
// load balancer's 35.191.0.0/16 and 130.211.0.0/22) are wider. That is how the rule tells a control-plane rule.
const CONTROL_PLANE_PREFIX = 28;

const isControlPlanePeer = (peer: unknown) => String(at(peer, "ipBlock", "cidr") ?? "").endsWith(`/${CONTROL_PLANE_PREFIX}`);
const isKonnectivityPeer = (peer: unknown) =>
  at(peer, "namespaceSelector", "matchLabels", "kubernetes.io/metadata.name") === KONNECTIVITY_AGENT.namespace
  && at(peer, "podSelector", "matchLabels", "k8s-app") === KONNECTIVITY_AGENT.podLabels["k8s-app"];
/** A rule's ports as `TCP/6443`; an empty list means every port. */
const portsOf = (rule: unknown) => list(at(rule, "ports")).map((port) => `${String(at(port, "protocol") ?? "TCP")}/${String(at(port, "port"))}`);

const controlPlaneIngressThroughKonnectivity: InfraPolicy = {
  name: "gke-control-plane-ingress-through-konnectivity",
  // Sources:
  // - tigera/operator PR 5212 (merged 2026-08-18): "On AKS and GKE the API server reaches in-cluster webhooks
  //   through konnectivity agent pods, so the admission call arrives ... with a pod source IP ... GKE uses
  //   k8s-app"; cozystack/cozystack PR 3798 exempts the same pods for the ingress-nginx admission webhook.
  // - Kubernetes docs, "Set up Konnectivity service" (https://kubernetes.io/docs/tasks/extend-kubernetes/setup-konnectivity/):
  //   the API server's egress to the cluster (webhooks, aggregated APIs, logs, exec) goes through the agents,
  //   which kubernetes/website's konnectivity-agent.yaml runs in kube-system with the label k8s-app: konnectivity-agent.
  description: "A NetworkPolicy that admits the GKE control-plane range (a /28 ipBlock) also admits the konnectivity-agent pods in kube-system on the same ports; through Konnectivity the API server's calls to webhooks and aggregated APIs come from those pods.",
  enforcementLevel: "mandatory",
  check({ type, props }) {
    if (type !== T.networkPolicy) return [];
    const rules = list(at(props, "spec", "ingress"));
    const konnectivityPorts = rules.filter((rule) => list(at(rule, "from")).some(isKonnectivityPeer)).map(portsOf);
    return rules.flatMap((rule) => {
      const controlPlane = list(at(rule, "from")).filter(isControlPlanePeer);
      if (controlPlane.length === 0) return [];
      const ports = portsOf(rule);
      const covered = konnectivityPorts.some((admitted) => admitted.length === 0 || (ports.length > 0 && ports.every((port) => admitted.includes(port))));
      if (covered) return [];
      const cidrs = controlPlane.map((peer) => String(at(peer, "ipBlock", "cidr"))).join(", ");
      return [`ingress from the control plane (${cidrs}) on ${ports.length === 0 ? "every port" : ports.join(", ")} has no rule admitting pods labelled k8s-app: konnectivity-agent in kube-system on those ports; through Konnectivity the API server's calls (custom metrics API, admission webhooks) come from them and are dropped`];
    });
  },
};

/** The APIs' cross-field rules, in the order they are reported. */
export const gkeApiRules: readonly InfraPolicy[] = [
  privateEndpointNeedsAuthorizedNetworks,
  nodePoolAutoscalingLimits,
  gcsFuseNeedsWorkloadIdentity,
  dcgmNeedsManagedPrometheus,
  dataplaneV2WithoutNetworkPolicyAddon,
  t4OnN1MachineTypes,
  latestGpuDriverNeedsCos,
  imageStreamingNeedsCosContainerd,
  surgeUpgradeNeedsProgress,
  healthCheckTimeoutWithinInterval,
  negBackendsBalancedByRate,
  urlMapPathMatcherRules,
  cloudArmorRuleShape,
  artifactRegistryCleanupPolicies,
  controlPlaneIngressThroughKonnectivity,
];

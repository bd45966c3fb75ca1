import { type DeclaredResource } from "./recording-mocks";

type Describe = (inputs: Record<string, unknown>) => (string | undefined)[];

function at(value: unknown, ...path: (string | number)[]): unknown {
  return path.reduce<unknown>((current, key) => (typeof current === "object" && current !== null ? (current as Record<string | number, unknown>)[key] : undefined), value);
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function field(label: string, value: unknown): string | undefined {
  if (value === undefined || value === null || (Array.isArray(value) && value.length === 0)) return undefined;
  return `${label}=${Array.isArray(value) ? value.join(",") : typeof value === "object" ? JSON.stringify(value) : String(value)}`;
}

const describers: Readonly<Record<string, Describe>> = {
  "gcp:compute/subnetwork:Subnetwork": (i) => [field("region", i["region"]), field("cidr", i["ipCidrRange"]),
    field("secondary", list(i["secondaryIpRanges"]).map((range) => `${String(at(range, "rangeName"))}:${String(at(range, "ipCidrRange"))}`))],
  "gcp:compute/firewall:Firewall": (i) => [field("from", i["sourceRanges"]), field("tcp", list(i["allows"]).flatMap((allow) => list(at(allow, "ports")))), field("to-tags", i["targetTags"])],
  "gcp:compute/routerNat:RouterNat": (i) => [field("region", i["region"]), field("nat", i["sourceSubnetworkIpRangesToNat"])],
  "gcp:container/cluster:Cluster": (i) => [field("name", i["name"]), field("location", i["location"]), field("zones", i["nodeLocations"]),
    field("channel", at(i, "releaseChannel", "channel")), field("privateNodes", at(i, "privateClusterConfig", "enablePrivateNodes")),
    field("dnsEndpoint", at(i, "controlPlaneEndpointsConfig", "dnsEndpointConfig", "allowExternalTraffic")),
    field("workloadPool", at(i, "workloadIdentityConfig", "workloadPool")), field("shieldedNodes", i["enableShieldedNodes"]),
    field("deletionProtection", i["deletionProtection"])],
  "gcp:container/nodePool:NodePool": (i) => [field("machine", at(i, "nodeConfig", "machineType")),
    field("gpu", list(at(i, "nodeConfig", "guestAccelerators")).map((gpu) => `${String(at(gpu, "count"))}x${String(at(gpu, "type"))}(driver ${String(at(gpu, "gpuDriverInstallationConfig", "gpuDriverVersion"))})`)),
    field("taints", list(at(i, "nodeConfig", "taints")).map((taint) => `${String(at(taint, "key"))}=${String(at(taint, "value"))}:${String(at(taint, "effect"))}`)),
    field("autoscaling", at(i, "autoscaling")), field("spot", at(i, "nodeConfig", "spot")), field("sa", at(i, "nodeConfig", "serviceAccount"))],
  "gcp:compute/healthCheck:HealthCheck": (i) => [field("http", `${String(at(i, "httpHealthCheck", "port"))}${String(at(i, "httpHealthCheck", "requestPath"))}`)],
  "gcp:compute/backendService:BackendService": (i) => [field("protocol", i["protocol"]), field("scheme", i["loadBalancingScheme"]),
    field("negs", list(i["backends"]).length), field("balancing", list(i["backends"]).map((backend) => at(backend, "balancingMode"))[0]), field("timeoutSec", i["timeoutSec"])],
  // Rules with a route action of their own answer at the load balancer (404) instead of forwarding: refused.
  "gcp:compute/uRLMap:URLMap": (i) => {
    const rules = list(at(i, "pathMatchers", 0, "routeRules"));
    const paths = (refused: boolean) => rules.filter((rule) => (at(rule, "routeAction") !== undefined) === refused)
      .flatMap((rule) => list(at(rule, "matchRules")).map((match) => String(at(match, "fullPathMatch") ?? at(match, "pathTemplateMatch"))));
    return [field("routes", paths(false)), field("refused", paths(true)),
    field("redirect", at(i, "defaultUrlRedirect", "httpsRedirect") === true ? "https" : undefined)];
  },
  "gcp:compute/globalForwardingRule:GlobalForwardingRule": (i) => [field("port", i["portRange"]), field("scheme", i["loadBalancingScheme"])],
  "gcp:compute/managedSslCertificate:ManagedSslCertificate": (i) => [field("domains", at(i, "managed", "domains"))],
  "gcp:compute/securityPolicy:SecurityPolicy": (i) => [field("rules", list(i["rules"]).map((rule) => `${String(at(rule, "priority"))}:${String(at(rule, "action"))}`))],
  "gcp:compute/sSLPolicy:SSLPolicy": (i) => [field("profile", i["profile"]), field("minTls", i["minTlsVersion"])],
  "gcp:projects/service:Service": (i) => [field("api", i["service"])],
  "gcp:serviceaccount/account:Account": (i) => [field("id", i["accountId"])],
  "gcp:projects/iAMMember:IAMMember": (i) => [field("role", i["role"])],
  "gcp:storage/bucket:Bucket": (i) => [field("name", i["name"]), field("location", i["location"])],
  "gcp:storage/bucketObject:BucketObject": (i) => [field("object", i["name"])],
  "gcp:artifactregistry/repository:Repository": (i) => [field("id", i["repositoryId"]), field("location", i["location"]),
    field("cleanup", list(i["cleanupPolicies"]).map((policy) => `${String(at(policy, "action"))}:${String(at(policy, "id"))}`))],
  "docker-build:index:Image": (i) => [field("tags", i["tags"]), field("dockerfile", at(i, "dockerfile", "location"))],
  "kubernetes:apps/v1:Deployment": (i) => {
    const container = at(i, "spec", "template", "spec", "containers", 0);
    return [field("image", at(container, "image")), field("gpu", at(container, "resources", "limits", "nvidia.com/gpu"))];
  },
  "kubernetes:core/v1:Service": (i) => [field("neg", at(i, "metadata", "annotations", "cloud.google.com/neg"))],
  "kubernetes:autoscaling/v2:HorizontalPodAutoscaler": (i) => [field("replicas", `${String(at(i, "spec", "minReplicas"))}-${String(at(i, "spec", "maxReplicas"))}`),
    field("metrics", list(at(i, "spec", "metrics")).map((metric) => `${String(at(metric, "pods", "metric", "name"))}<=${String(at(metric, "pods", "target", "averageValue"))}`))],
  "kubernetes:helm.sh/v3:Release": (i) => [field("chart", `${String(i["chart"])}@${String(i["version"])}`), field("namespace", i["namespace"])],
  "kubernetes:core/v1:ConfigMap": (i) => [field("files", Object.keys((i["data"] as Record<string, unknown> | undefined) ?? {}))],
  "kubernetes:batch/v1:Job": (i) => [field("name", at(i, "metadata", "name")), field("args", at(i, "spec", "template", "spec", "containers", 0, "args"))],
};

/** The few properties of a resource that say what it is, as `key=value` pairs; empty for most components. */
export function describeKeyProperties(resource: DeclaredResource): string {
  const describe = describers[resource.type];
  if (describe === undefined) {
    const metadataName = at(resource.inputs, "metadata", "name");
    return metadataName === undefined ? "" : `name=${String(metadataName)}`;
  }
  return describe(resource.inputs).filter((part) => part !== undefined).join(" ");
}

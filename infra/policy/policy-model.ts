/** A resource as a policy sees it: its type token and its input properties (SDK names, camelCase). */
export interface PolicyResource {
  readonly type: string;
  readonly props: Readonly<Record<string, unknown>>;
}

/** One rule: a plain function over a resource's inputs, returning one message per violation. */
export interface InfraPolicy {
  readonly name: string;
  readonly description: string;
  readonly enforcementLevel: "advisory" | "mandatory";
  check(resource: PolicyResource): string[];
}

/** Type tokens of the resources the rules look at (`MockResourceArgs.type`, `ResourceValidationArgs.type`). */
export const resourceTypes = {
  cluster: "gcp:container/cluster:Cluster",
  nodePool: "gcp:container/nodePool:NodePool",
  firewall: "gcp:compute/firewall:Firewall",
  httpsProxy: "gcp:compute/targetHttpsProxy:TargetHttpsProxy",
  backendService: "gcp:compute/backendService:BackendService",
  healthCheck: "gcp:compute/healthCheck:HealthCheck",
  urlMap: "gcp:compute/uRLMap:URLMap",
  securityPolicy: "gcp:compute/securityPolicy:SecurityPolicy",
  artifactRepository: "gcp:artifactregistry/repository:Repository",
  projectIamMember: "gcp:projects/iAMMember:IAMMember",
  projectIamBinding: "gcp:projects/iAMBinding:IAMBinding",
  networkPolicy: "kubernetes:networking.k8s.io/v1:NetworkPolicy",
} as const;

/** A nested input, or undefined where any step of the path is missing. */
export function at(value: unknown, ...path: (string | number)[]): unknown {
  return path.reduce<unknown>((current, key) => (typeof current === "object" && current !== null ? (current as Record<string | number, unknown>)[key] : undefined), value);
}

/** An input that should be a list, as a list (empty when absent). */
export function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** The node settings a rule checks: the cluster's (its default pool) or a node pool's. */
export function nodeConfigOf(resource: PolicyResource): unknown {
  return resource.type === resourceTypes.cluster || resource.type === resourceTypes.nodePool ? resource.props["nodeConfig"] : undefined;
}

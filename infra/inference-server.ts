/** The KServe v2 / Triton gRPC service every public gRPC method belongs to. */
const GRPC_SERVICE = "inference.GRPCInferenceService";

/**
 * What the program relies on from the inference server (server/): its ports, health endpoints and the
 * Kubernetes names both the regional workload and the global IAM/load-balancer wiring must agree on.
 */
export const inferenceServer = {
  ports: { http: 8000, grpc: 8001, metrics: 8002 },
  /** KServe v2 health: 200 when live/ready; ready is 4xx/503 while a model is not READY (--strict-readiness). */
  health: { livePath: "/v2/health/live", readyPath: "/v2/health/ready" },
  kubernetes: {
    namespace: "inference",
    /** Name of the Deployment, Service, PDB, HPA and Kubernetes service account (dashboards query `deployment="inference-server"`). */
    name: "inference-server",
  },
  /** Where the pods mount the model repository bucket. */
  modelRepositoryMountPath: "/models",
  /**
   * Triton's restricted APIs (`--http-restricted-api`, `--grpc-restricted-protocol`): these API groups answer
   * only requests that carry the header `admin-key` (gRPC: metadata `triton-grpc-protocol-admin-key`) with the
   * key from the Kubernetes Secret. Health, metadata and inference stay open; they are all the internet reaches.
   */
  restrictedApis: {
    groups: ["model-repository", "model-config", "statistics", "trace", "logging", "shared-memory"],
    header: "admin-key",
    /** Triton prefixes the header of a restricted gRPC protocol with this in the call's metadata. */
    grpcMetadataPrefix: "triton-grpc-protocol-",
    /** The server reads the key from this environment variable (`env:NAME` in the flag's value). */
    environmentVariable: "INFERENCE_ADMIN_KEY",
    secret: { name: "inference-admin-key", key: "admin-key" },
  },
  /**
   * The only requests the global load balancer forwards from the internet: Triton's health, metadata and
   * inference API groups. Path templates use the load balancer's syntax (`*` is exactly one path segment).
   * `/v2/models/stats` (statistics) has the shape of a model path and is refused before these match.
   */
  publicRoutes: {
    restPaths: ["/v2", "/v2/health/live", "/v2/health/ready"],
    restPathTemplates: ["", "/ready", "/infer", "/generate", "/generate_stream"].flatMap((suffix) => [
      `/v2/models/*${suffix}`,
      `/v2/models/*/versions/*${suffix}`,
    ]),
    refusedRestPaths: ["/v2/models/stats"],
    grpcMethods: ["ServerLive", "ServerReady", "ModelReady", "ServerMetadata", "ModelMetadata", "ModelInfer", "ModelStreamInfer"]
      .map((method) => `/${GRPC_SERVICE}/${method}`),
  },
} as const;

/**
 * The Kubernetes service account of the server pods in one region's cluster. Each region has its own, so each
 * region has its own Workload Identity binding: one that waited for every cluster would let one region's failed
 * cluster hold back every other region's workload, and two regions sharing one IAM member would lose it together
 * when either is deleted.
 */
export function serverServiceAccountName(region: string): string {
  return `${inferenceServer.kubernetes.name}-${region}`;
}

/** The server's restricted-API flag value: `<groups>:<header>=env:<variable>` (the key itself never appears in the spec). */
export function restrictedApiFlagValue(): string {
  const { groups, header, environmentVariable } = inferenceServer.restrictedApis;
  return `${groups.join(",")}:${header}=env:${environmentVariable}`;
}

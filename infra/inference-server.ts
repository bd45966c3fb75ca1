/**
 * What the program relies on from the inference server (server/): its ports, health endpoints and the
 * Kubernetes names both the regional workload and the global IAM/load-balancer wiring must agree on.
 */
export const inferenceServer = {
  ports: { http: 8000, grpc: 8001, metrics: 8002 },
  /** KServe v2 health: 200 when live/ready; ready is 4xx/503 while a model is not READY (--strict-readiness). */
  health: { livePath: "/v2/health/live", readyPath: "/v2/health/ready" },
  /** The gRPC service path the load balancer routes to the gRPC (port 8001) backends. */
  grpcServicePathPattern: "/inference.GRPCInferenceService/*",
  kubernetes: {
    namespace: "inference",
    /** Name of the Deployment, Service, PDB, HPA and Kubernetes service account (dashboards query `deployment="inference-server"`). */
    name: "inference-server",
  },
  /** Where the pods mount the model repository bucket. */
  modelRepositoryMountPath: "/models",
} as const;

import path from "node:path";
import { findPackageRoot } from "../../common/find-package-root";
import { type ServiceProcess, startServiceProcess } from "./service-process";

/** The inference server as a child process on loopback ports picked by the OS. */
export interface InferenceServerProcess {
  readonly process: ServiceProcess;
  readonly httpUrl: string;
  /** host:port; only when gRPC was not disabled in `extraArgs`. */
  readonly grpcAddress: string | undefined;
  /** http://host:port of the metrics endpoint; only when metrics were not disabled in `extraArgs`. */
  readonly metricsUrl: string | undefined;
}

/** How long a server may take to load its models (and run their warmup) before it counts as failed. */
const START_TIMEOUT_MS = 120_000;

/**
 * Starts the compiled server (`dist/server/main.js` of this package, or of the checkout at `root`) on 127.0.0.1 with
 * every port 0, and resolves once it announced its HTTP (and gRPC, metrics unless disabled) port. Rejects with the
 * server's output when it exits first (a model that fails to load at startup, bad flags) or does not start in time.
 */
export async function startInferenceServerProcess(
  modelRepository: string, extraArgs: readonly string[], root = findPackageRoot(__dirname),
): Promise<InferenceServerProcess> {
  const grpc = !extraArgs.includes("--allow-grpc");
  const metrics = !extraArgs.includes("--allow-metrics");
  const process = await startServiceProcess([
    path.join(root, "dist", "server", "main.js"), "--model-repository", modelRepository,
    "--http-address", "127.0.0.1", "--http-port", "0", "--grpc-address", "127.0.0.1", "--grpc-port", "0",
    "--metrics-address", "127.0.0.1", "--metrics-port", "0", ...extraArgs,
  ], {
    http: /"service":"http","port":(\d+)/,
    ...(grpc ? { grpc: /"service":"grpc","port":(\d+)/ } : {}),
    ...(metrics ? { metrics: /"service":"metrics","port":(\d+)/ } : {}),
  }, START_TIMEOUT_MS, root);
  return {
    process,
    httpUrl: `http://127.0.0.1:${process.ports["http"]}`,
    grpcAddress: grpc ? `127.0.0.1:${process.ports["grpc"]}` : undefined,
    metricsUrl: metrics ? `http://127.0.0.1:${process.ports["metrics"]}` : undefined,
  };
}

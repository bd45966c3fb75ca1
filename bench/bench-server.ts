import path from "node:path";
import { type ServiceProcess, startServiceProcess } from "./service-process";

/** The inference server as a child process on loopback ports picked by the OS. */
export interface BenchServer {
  readonly process: ServiceProcess;
  readonly httpUrl: string;
  /** host:port; only when gRPC was not disabled in `extraArgs`. */
  readonly grpcAddress: string | undefined;
  /** Only when metrics were not disabled in `extraArgs`. */
  readonly metricsUrl: string | undefined;
}

export async function startBenchServer(repositoryRoot: string, modelRepository: string, extraArgs: readonly string[]): Promise<BenchServer> {
  const grpc = !extraArgs.includes("--allow-grpc");
  const metrics = !extraArgs.includes("--allow-metrics");
  const process = await startServiceProcess([
    path.join(repositoryRoot, "dist", "server", "main.js"), "--model-repository", modelRepository,
    "--http-address", "127.0.0.1", "--http-port", "0", "--grpc-address", "127.0.0.1", "--grpc-port", "0",
    "--metrics-address", "127.0.0.1", "--metrics-port", "0", ...extraArgs,
  ], {
    http: /"service":"http","port":(\d+)/,
    ...(grpc ? { grpc: /"service":"grpc","port":(\d+)/ } : {}),
    ...(metrics ? { metrics: /"service":"metrics","port":(\d+)/ } : {}),
  }, 120_000, repositoryRoot);
  return {
    process,
    httpUrl: `http://127.0.0.1:${process.ports["http"]}`,
    grpcAddress: grpc ? `127.0.0.1:${process.ports["grpc"]}` : undefined,
    metricsUrl: metrics ? `http://127.0.0.1:${process.ports["metrics"]}` : undefined,
  };
}

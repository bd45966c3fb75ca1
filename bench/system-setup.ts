import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/** The facts a benchmark number is meaningless without. */
export interface SystemSetup {
  readonly cpuModel: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly node: string;
  readonly onnxruntime: string;
  readonly fastify: string;
  readonly undici: string;
  readonly grpcJs: string;
  readonly connectNode: string;
  readonly server: string;
}

function packageVersion(root: string, name: string): string {
  try {
    return (JSON.parse(readFileSync(path.join(root, "node_modules", name, "package.json"), "utf8")) as { version: string }).version;
  } catch {
    return "unknown";
  }
}

/** CPU, memory and the versions of everything on the measured path. */
export function describeSystem(repositoryRoot: string): SystemSetup {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model.trim() ?? "unknown",
    cores: os.availableParallelism(),
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    onnxruntime: packageVersion(repositoryRoot, "onnxruntime-node"),
    fastify: packageVersion(repositoryRoot, "fastify"),
    undici: packageVersion(repositoryRoot, "undici"),
    grpcJs: packageVersion(repositoryRoot, "@grpc/grpc-js"),
    connectNode: packageVersion(repositoryRoot, "@connectrpc/connect-node"),
    server: (JSON.parse(readFileSync(path.join(repositoryRoot, "package.json"), "utf8")) as { version: string }).version,
  };
}

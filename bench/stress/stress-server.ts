import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { type ServiceProcess, startInferenceServerProcess } from "../../tools/tune/index";

/** The server under stress, a child process on 127.0.0.1 with OS-picked ports. */
export interface StressServer {
  readonly process: ServiceProcess;
  readonly httpUrl: string;
  /** host:port */
  readonly grpcAddress: string;
}

/** Where the campaign finds the built server and the example models. */
export interface StressPaths {
  readonly repositoryRoot: string;
  readonly exampleRepository: string;
}

export async function startStressServer(paths: StressPaths, modelRepository: string, extraArgs: readonly string[]): Promise<StressServer> {
  const server = await startInferenceServerProcess(modelRepository, ["--allow-metrics", "false", ...extraArgs], paths.repositoryRoot);
  if (server.grpcAddress === undefined) throw new Error("the stress campaign needs the gRPC endpoint; do not pass --allow-grpc");
  return { process: server.process, httpUrl: server.httpUrl, grpcAddress: server.grpcAddress };
}

/** The process's resident set now and at its peak (VmHWM), bytes; writing 5 to clear_refs resets the peak. */
export function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kB = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status)![1]) * 1024;
  return { rss: kB("VmRSS"), peak: kB("VmHWM") };
}

/** Resident set size of a process, MiB (Linux /proc); undefined once it is gone. */
export function residentMiB(pid: number | undefined): number | undefined {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match === null ? undefined : Number(match[1]) / 1024;
  } catch {
    return undefined;
  }
}

/** A model repository in a temporary directory, removed by `dispose`. */
export class ScratchRepository {
  readonly path = mkdtempSync(path.join(os.tmpdir(), "stress-repo-"));

  constructor(private readonly paths: StressPaths) {}

  /** A copy of an example model (`simple`, `resnet50`...) under `name`, config name adjusted. */
  copyExample(example: string, name: string): string {
    const from = path.join(this.paths.exampleRepository, example);
    const to = path.join(this.path, name);
    mkdirSync(path.join(to, "1"), { recursive: true });
    copyFileSync(path.join(from, "1", "model.onnx"), path.join(to, "1", "model.onnx"));
    const config = readFileSync(path.join(from, "config.pbtxt"), "utf8").replace(/^name: ".*"$/m, `name: "${name}"`);
    writeFileSync(path.join(to, "config.pbtxt"), config);
    return to;
  }

  /** An identity-backend model of INT32 `[dims]` whose executions each take `delayMs`. */
  identity(name: string, delayMs: number, extraConfig: string): void {
    mkdirSync(path.join(this.path, name, "1"), { recursive: true });
    writeFileSync(path.join(this.path, name, "config.pbtxt"), `backend: "identity"
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 16 ] } ]
parameters [ { key: "execute_delay_ms" value: { string_value: "${delayMs}" } } ]
${extraConfig}`);
  }

  dispose(): void {
    rmSync(this.path, { recursive: true, force: true });
  }
}

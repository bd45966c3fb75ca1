import { InferenceClient, type InferInput, type ModelStatistics } from "../../client/index";
import { preparedSender, type RequestSender } from "../perf/index";
import { createCandidateRepository, type CandidateRepository } from "./candidate-repository";
import { type InferenceServerProcess, startInferenceServerProcess } from "./inference-server-process";
import { ServiceStartError } from "./service-process";

/** A candidate configuration that did not serve: the server's own reason. */
export class CandidateLoadError extends Error {
  override readonly name = "CandidateLoadError";
}

/**
 * Why a server that exited at startup failed, from its JSON log: the message of its last error or fatal line (a
 * model that failed to load), else its last line.
 */
export function serverFailureReason(output: string): string {
  const lines = output.split("\n").map((line) => line.trim()).filter((line) => line !== "");
  for (const line of [...lines].reverse()) {
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string };
      if ((entry.level ?? 0) >= 50 && typeof entry.msg === "string") return entry.msg;
    } catch {
      // not a log line (the process' own error message)
    }
  }
  return lines.at(-1) ?? "the server exited without output";
}

/** GPUs the server reported: the distinct `gpu_uuid`s of its `nv_gpu_memory_total_bytes` gauge. */
export function gpuCountFromMetrics(metricsText: string): number {
  const uuids = new Set<string>();
  for (const match of metricsText.matchAll(/^nv_gpu_memory_total_bytes\{[^}]*gpu_uuid="([^"]+)"[^}]*\}/gm)) uuids.add(match[1]!);
  return uuids.size;
}

export interface CandidateServerOptions {
  readonly modelName: string;
  readonly protocol: "http" | "grpc";
  /** Serve metrics, to learn which GPUs the server sees (see {@link CandidateServer.reportedGpuCount}). */
  readonly metrics: boolean;
}

/**
 * Our own server serving one candidate configuration from a throwaway repository, in explicit model-control mode
 * with only that model: started on loopback ports chosen by the OS, stopped (and its repository removed) by
 * {@link stop}. Load goes over the chosen protocol; statistics and configuration over HTTP, on their own
 * connections so they never queue behind the load.
 */
export class CandidateServer {
  private constructor(
    private readonly repository: CandidateRepository,
    private readonly server: InferenceServerProcess,
    private readonly options: CandidateServerOptions,
    /** Load: the protocol under test. */
    readonly client: InferenceClient,
    /** Metadata, configuration and statistics. */
    readonly control: InferenceClient,
  ) {}

  /** Rejects with {@link CandidateLoadError} when the configuration does not load. */
  static async start(modelDirectory: string, configText: string, options: CandidateServerOptions): Promise<CandidateServer> {
    const repository = await createCandidateRepository(modelDirectory, options.modelName, configText);
    let server: InferenceServerProcess;
    try {
      // The candidate repository links the user's model files from its own temporary folder.
      server = await startInferenceServerProcess(repository.path, [
        "--model-control-mode", "explicit", "--load-model", options.modelName, "--exit-on-error", "true", "--model-symlinks", "any",
        ...(options.protocol === "grpc" ? [] : ["--allow-grpc", "false"]),
        ...(options.metrics ? [] : ["--allow-metrics", "false"]),
      ]);
    } catch (error) {
      await repository.remove();
      if (!(error instanceof ServiceStartError)) throw error;
      throw new CandidateLoadError(serverFailureReason(error.output));
    }
    const url = options.protocol === "grpc" ? `grpc://${server.grpcAddress!}` : server.httpUrl;
    return new CandidateServer(repository, server, options, new InferenceClient({ url }), new InferenceClient({ url: server.httpUrl }));
  }

  /** Reads the statistics extension for the model (all versions). */
  readonly readStatistics = (): Promise<ModelStatistics[]> => this.control.modelStatistics(this.options.modelName);

  /** Sends `inputs` over and over, encoded once (as perf_analyzer reuses its input data). */
  sender(inputs: readonly InferInput[]): RequestSender {
    return preparedSender(this.client, this.options.modelName, inputs);
  }

  /** GPUs in the server's metrics; 0 without metrics or without a GPU (the gauges are then absent). */
  async reportedGpuCount(): Promise<number> {
    if (this.server.metricsUrl === undefined) return 0;
    const response = await fetch(`${this.server.metricsUrl}/metrics`);
    return gpuCountFromMetrics(await response.text());
  }

  async stop(): Promise<void> {
    await Promise.all([this.client.close(), this.control.close()]);
    await this.server.process.stop();
    await this.repository.remove();
  }
}

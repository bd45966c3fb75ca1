import os from "node:os";
import { InvalidArgumentError } from "@commander-js/extra-typings";
import type { TraceSettingValues } from "../tracing/index";
import { addNetworkOptions, type NetworkOptions, parseNetworkOptions } from "./network-options";
import { parseInteger } from "../../common/option-parsers";
import type { LogFormat } from "../logging/log-settings";
import type { SecretSources } from "./restricted-api-option";
import { parseTraceConfig } from "./trace-config-option";
import type { GrpcCompressionLevel } from "../frontends/grpc/response-compression";
import { serverFlags } from "./server-flags";

/** Everything the server is started with, parsed once from Triton-compatible flags. */
export interface ServerOptions extends NetworkOptions {
  readonly modelRepositories: string[];
  readonly id: string;
  readonly httpAddress: string;
  readonly httpPort: number;
  readonly grpcAddress: string;
  readonly grpcPort: number;
  readonly metricsAddress: string;
  readonly metricsPort: number;
  readonly allowHttp: boolean;
  readonly allowGrpc: boolean;
  readonly allowMetrics: boolean;
  readonly allowCpuMetrics: boolean;
  readonly allowGpuMetrics: boolean;
  /** Whether KIND_GPU and KIND_AUTO may use a software WebGPU adapter (Mesa's lavapipe) where no NVIDIA GPU is. */
  readonly allowSoftwareGpu: boolean;
  readonly metricsIntervalMs: number;
  readonly strictReadiness: boolean;
  readonly exitOnError: boolean;
  readonly exitTimeoutSecs: number;
  readonly autoCompleteConfig: boolean;
  readonly logVerbose: number;
  /** Triton's --log-info, --log-warning, --log-error: each severity switched on or off on its own. */
  readonly logInfo: boolean;
  readonly logWarning: boolean;
  readonly logError: boolean;
  /** Triton's --log-format: the `time` field as epoch milliseconds (default) or an ISO 8601 string. */
  readonly logFormat: LogFormat;
  readonly httpMaxInputSize: number;
  readonly grpcMaxMessageSize: number;
  readonly grpcFlowControlWindow: number;
  readonly grpcMaxFrameSize: number;
  readonly grpcInferResponseCompression: GrpcCompressionLevel;
  readonly modelControlMode: "none" | "explicit" | "poll";
  readonly repositoryPollSecs: number;
  readonly loadModels: string[];
  readonly intraOpThreads: number | undefined;
  readonly defaultMaxBatchSize: number;
  readonly cpuCount: number;
  /** V8's old-generation growth after a full GC, percent; 0 = V8's own adaptive factor. */
  readonly heapGrowingPercent: number;
  /** V8's allocation-site pretenuring (off by default: see `--allocation-site-pretenuring`). */
  readonly allocationSitePretenuring: boolean;
  /** Bytes of the response cache (`--cache-config local,size=N`); undefined = no cache. */
  readonly responseCacheBytes: number | undefined;
  /** Backoff before an instance whose worker died is restarted: the first delay, doubling up to the max. */
  readonly instanceRestartBackoffMs: number;
  readonly instanceRestartMaxBackoffMs: number;
  /** Most BYTES elements in one input tensor. */
  readonly maxBytesElements: number;
  /** Largest single BYTES element, bytes. */
  readonly maxBytesElementSize: number;
  /** Most responses one stream may have written while its client reads none. */
  readonly maxStreamBacklog: number;
  /** How deeply models' calls to other models (BLS) may nest. */
  readonly modelCallMaxDepth: number;
  /** Where symlinks in model directories may lead. */
  readonly modelSymlinks: "inside" | "any";
  /** Triton's `--trace-config`: the global trace setting at start. */
  readonly traceSetting: TraceSettingValues;
  /** Bytes of traces held back per trace file (waiting to be written or collected for a group); beyond, traces drop. */
  readonly traceMaxPendingBytes: number;
  /** Whether clients may register system shared memory regions (--allow-client-shm). */
  readonly allowClientShm: boolean;
  /** Whether the load API's `file:` overrides may carry model code (--allow-model-code-upload). */
  readonly allowModelCodeUpload: boolean;
  /** Most system shared memory regions registered at once (each holds an open file). */
  readonly maxSharedMemoryRegions: number;
  readonly maxSharedMemoryInputBytes: number;
  /** Bytes of requests in flight at once (bodies, gRPC messages, decoded tensors); beyond, 503 / RESOURCE_EXHAUSTED. */
  readonly maxInflightRequestBytes: number;
}

/** Triton's `--backend-config=<backend>,<key>=<value>`, for the onnxruntime keys we honour. */
function parseBackendConfig(entries: readonly string[]): { intraOpThreads: number | undefined; defaultMaxBatchSize: number } {
  let intraOpThreads: number | undefined;
  let defaultMaxBatchSize = 4;
  for (const entry of entries) {
    const match = /^(?:([a-z_]+),)?([a-z_-]+)=(.+)$/.exec(entry);
    if (match === null) throw new InvalidArgumentError(`--backend-config '${entry}' is not <backend>,<key>=<value>`);
    const [, backend, key, value] = match;
    if (backend !== undefined && backend !== "onnxruntime") throw new InvalidArgumentError(`--backend-config: unknown backend '${backend}'`);
    if (key === "intra_op_thread_count") intraOpThreads = parseInteger(1, 1024)(value!);
    else if (key === "default-max-batch-size") defaultMaxBatchSize = parseInteger(0, 1 << 20)(value!);
    else throw new InvalidArgumentError(`--backend-config: unknown key '${key}' (intra_op_thread_count, default-max-batch-size)`);
  }
  return { intraOpThreads, defaultMaxBatchSize };
}

// The flags' defaults stay importable from here, where the server's options are.
export { DEFAULT_GRPC_MAX_MESSAGE_BYTES, DEFAULT_HEAP_GROWING_PERCENT, DEFAULT_MAX_INFLIGHT_REQUEST_BYTES } from "./server-flags";

/** Triton's `--cache-config <cache>,<key>=<value>`: the local (in-memory) cache and its `size` in bytes. */
function parseCacheConfig(entries: readonly string[]): number | undefined {
  let size: number | undefined;
  for (const entry of entries) {
    const match = /^([a-z_]+),([a-z_]+)=(.+)$/.exec(entry);
    if (match === null) throw new InvalidArgumentError(`--cache-config '${entry}' is not <cache>,<key>=<value>`);
    const [, cache, key, value] = match;
    if (cache !== "local") throw new InvalidArgumentError(`--cache-config: only the 'local' cache is available, not '${cache}'`);
    if (key !== "size") throw new InvalidArgumentError(`--cache-config: unknown key '${key}' for the local cache (size)`);
    size = parseInteger(1)(value!);
  }
  if (entries.length > 0 && size === undefined) throw new InvalidArgumentError("--cache-config local needs size=<bytes>");
  return size;
}

/** The inference-server command: its own flags, then the network flags, each declared once with its type. */
export function buildCommand() {
  return addNetworkOptions(serverFlags());
}

/** The option values {@link buildCommand} declares, as commander parses them. */
type ServerOptionValues = ReturnType<ReturnType<typeof buildCommand>["opts"]>;

/**
 * Parses argv (without node and the script); throws commander's errors for bad flags, after printing them (exit
 * code 1 for a flag commander itself refuses, 2 for a value found wrong afterwards: a file, a secret, a mismatch).
 */
export function parseServerOptions(argv: readonly string[], command = buildCommand(), secrets?: SecretSources): ServerOptions {
  command.exitOverride().parse([...argv], { from: "user" });
  try {
    return optionsFrom(command.opts(), secrets);
  } catch (error) {
    if (error instanceof InvalidArgumentError) command.error(`error: ${error.message}`, { exitCode: 2, code: "inference-server.invalidOptions" });
    throw error;
  }
}

function optionsFrom(o: ServerOptionValues, secrets: SecretSources | undefined): ServerOptions {
  const modelRepositories = [...o.modelRepository, ...o.modelStore];
  if (modelRepositories.length === 0) throw new InvalidArgumentError("--model-repository is required");
  const backendConfig = parseBackendConfig(o.backendConfig);
  const { instanceRestartBackoffMs, instanceRestartMaxBackoffMs } = o;
  if (instanceRestartMaxBackoffMs < instanceRestartBackoffMs) {
    throw new InvalidArgumentError(`--instance-restart-max-backoff-ms ${instanceRestartMaxBackoffMs} is below --instance-restart-backoff-ms ${instanceRestartBackoffMs}`);
  }
  return {
    modelRepositories,
    id: o.id,
    httpAddress: o.httpAddress, httpPort: o.httpPort,
    grpcAddress: o.grpcAddress, grpcPort: o.grpcPort,
    metricsAddress: o.metricsAddress, metricsPort: o.metricsPort,
    allowHttp: o.allowHttp, allowGrpc: o.allowGrpc, allowMetrics: o.allowMetrics,
    allowCpuMetrics: o.allowCpuMetrics, allowGpuMetrics: o.allowGpuMetrics,
    allowSoftwareGpu: o.allowSoftwareGpu,
    metricsIntervalMs: o.metricsIntervalMs,
    strictReadiness: o.strictReadiness,
    exitOnError: o.exitOnError,
    exitTimeoutSecs: o.exitTimeoutSecs,
    autoCompleteConfig: !o.disableAutoCompleteConfig && o.strictModelConfig !== true,
    logVerbose: o.logVerbose,
    logInfo: o.logInfo, logWarning: o.logWarning, logError: o.logError,
    logFormat: o.logFormat,
    httpMaxInputSize: o.httpMaxInputSize,
    grpcMaxMessageSize: o.grpcMaxMessageSize,
    grpcFlowControlWindow: o.grpcFlowControlWindow,
    grpcMaxFrameSize: o.grpcMaxFrameSize,
    grpcInferResponseCompression: o.grpcInferResponseCompressionLevel,
    modelControlMode: o.modelControlMode,
    repositoryPollSecs: o.repositoryPollSecs,
    loadModels: o.loadModel,
    intraOpThreads: backendConfig.intraOpThreads,
    defaultMaxBatchSize: backendConfig.defaultMaxBatchSize,
    cpuCount: os.availableParallelism(),
    heapGrowingPercent: o.heapGrowingPercent,
    allocationSitePretenuring: o.allocationSitePretenuring,
    responseCacheBytes: parseCacheConfig(o.cacheConfig),
    instanceRestartBackoffMs,
    instanceRestartMaxBackoffMs,
    maxBytesElements: o.maxBytesElements,
    maxBytesElementSize: o.maxBytesElementSize,
    maxStreamBacklog: o.maxStreamBacklog,
    modelCallMaxDepth: o.modelCallMaxDepth,
    modelSymlinks: o.modelSymlinks,
    traceSetting: parseTraceConfig(o.traceConfig),
    traceMaxPendingBytes: o.traceMaxPendingBytes,
    allowClientShm: o.allowClientShm,
    allowModelCodeUpload: o.allowModelCodeUpload,
    maxSharedMemoryRegions: o.maxSharedMemoryRegions,
    maxSharedMemoryInputBytes: o.maxSharedMemoryInputBytes,
    maxInflightRequestBytes: o.maxInflightRequestBytes,
    ...parseNetworkOptions(o, secrets),
  };
}

import os from "node:os";
import { Command, InvalidArgumentError, Option } from "commander";
import { DEFAULT_MAX_CALL_DEPTH, DEFAULT_REQUEST_LIMITS, type TraceSettingValues } from "../core/index";
import { addNetworkOptions, type NetworkOptions, parseNetworkOptions } from "./network-options";
import { booleanFlag, collect, parseBoolean, parseInteger } from "../../common/option-parsers";
import { type LogFormat, MAX_VERBOSE_LEVEL } from "../logging/log-settings";
import type { SecretSources } from "./restricted-api-option";
import { parseTraceConfig } from "./trace-config-option";
import { GRPC_COMPRESSION_LEVELS, type GrpcCompressionLevel } from "../frontends/grpc/response-compression";

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

/**
 * Tensors arrive as ArrayBuffers outside the JS heap, and V8 counts them towards its next full collection: at
 * its adaptive default a server taking 600 KB images runs a full mark-compact about once a second, on a heap
 * whose live part (~16 MB) hardly changes, and that CPU comes out of the inference threads' share. Letting the
 * heap grow to 4x its live size first makes full collections rare for a few tens of MB.
 */
export const DEFAULT_HEAP_GROWING_PERCENT = 300;

/**
 * The largest gRPC message by default: as large as the largest HTTP body (--http-max-input-size), so that one
 * request costs the same at most whichever protocol it takes. Triton's INT32_MAX (2 GiB) lets one request take
 * several times that in memory while it is decoded; deployments that send larger tensors raise both.
 */
export const DEFAULT_GRPC_MAX_MESSAGE_BYTES = 1 << 26;

/** Bytes of requests in flight by default: sixteen of the largest requests, at their bodies' size. */
export const DEFAULT_MAX_INFLIGHT_REQUEST_BYTES = 1 << 30;

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

export function buildCommand(): Command {
  const command = new Command("inference-server")
    .description("Triton-compatible (KServe v2) inference server for ONNX models")
    .option("--model-repository <dir>", "model repository path; repeat for several (alias --model-store)", collect, [])
    .option("--model-store <dir>", "alias of --model-repository", collect, [])
    .option("--id <name>", "server name reported in server metadata", "triton")
    .option("--http-address <address>", "address the HTTP endpoint binds", "0.0.0.0")
    .option("--http-port <port>", "HTTP (KServe v2 REST) port; 0 picks a free one", parseInteger(0, 65535), 8000)
    .option("--grpc-address <address>", "address the gRPC endpoint binds", "0.0.0.0")
    .option("--grpc-port <port>", "gRPC (GRPCInferenceService) port; 0 picks a free one", parseInteger(0, 65535), 8001)
    .option("--metrics-address <address>", "address the metrics endpoint binds", "0.0.0.0")
    .option("--metrics-port <port>", "Prometheus metrics port (path /metrics); 0 picks a free one", parseInteger(0, 65535), 8002)
    .addOption(booleanFlag("--allow-http", "serve the HTTP endpoint", true))
    .addOption(booleanFlag("--allow-grpc", "serve the gRPC endpoint", true))
    .addOption(booleanFlag("--allow-metrics", "serve the metrics endpoint", true))
    .addOption(booleanFlag("--allow-cpu-metrics", "export host CPU utilization and memory (nv_cpu_*)", true))
    .addOption(booleanFlag("--allow-gpu-metrics", "export GPU utilization and memory (nv_gpu_*) read with nvidia-smi", true))
    .addOption(booleanFlag("--allow-software-gpu", "without an NVIDIA GPU, count a software WebGPU adapter (Mesa's lavapipe) as GPU 0 for KIND_GPU/KIND_AUTO", false))
    .option("--metrics-interval-ms <ms>", "how often CPU and GPU metrics are sampled (at least 100)", parseInteger(100), 2000)
    .addOption(booleanFlag("--strict-readiness", "ready only when every model is ready (else: when the server responds)", true))
    .addOption(booleanFlag("--exit-on-error", "exit when a model fails to load at startup", true))
    .option("--exit-timeout-secs <secs>", "on SIGTERM, how long to wait for in-flight requests", parseInteger(0), 30)
    .option("--disable-auto-complete-config", "do not complete model configs from the model files", false)
    .addOption(new Option("--strict-model-config [bool]", "deprecated alias: true disables auto-complete").argParser(parseBoolean))
    .option("--log-verbose <level>", "verbose logging level (0 = off, 1+ = debug)", parseInteger(0, MAX_VERBOSE_LEVEL), 0)
    .addOption(booleanFlag("--log-info", "write info lines", true))
    .addOption(booleanFlag("--log-warning", "write warning lines", true))
    .addOption(booleanFlag("--log-error", "write error lines", true))
    .addOption(new Option("--log-format <format>", "the time field of each JSON line: default (epoch milliseconds) or ISO8601 (UTC string)").choices(["default", "ISO8601"]).default("default"))
    .option("--http-max-input-size <bytes>", "largest HTTP request body, compressed or decompressed", parseInteger(1), 1 << 26)
    .option("--max-bytes-elements <count>", "most BYTES (string) elements one input tensor may hold (each costs far more memory than its 4 bytes on the wire)", parseInteger(1, 2 ** 31 - 1), DEFAULT_REQUEST_LIMITS.maxBytesElements)
    .option("--max-bytes-element-size <bytes>", "largest single BYTES (string) element", parseInteger(1, 2 ** 32 - 1), DEFAULT_REQUEST_LIMITS.maxBytesElementSize)
    .option("--model-call-max-depth <count>", "most nested calls from a model to another model (BLS); a call beyond is refused", parseInteger(1, 1000), DEFAULT_MAX_CALL_DEPTH)
    .option("--grpc-max-message-size <bytes>", "largest gRPC message received or sent (Triton: 2147483647)", parseInteger(1, 2 ** 31 - 1), DEFAULT_GRPC_MAX_MESSAGE_BYTES)
    .option("--grpc-flow-control-window <bytes>", "HTTP/2 receive window per stream and per connection", parseInteger(65_535, 2 ** 31 - 1), 8 * 1024 * 1024)
    .addOption(new Option("--grpc-infer-response-compression-level <level>", "compression of ModelInfer and ModelStreamInfer responses, as Triton: low picks gzip, medium and high deflate, among those the client accepts").choices(GRPC_COMPRESSION_LEVELS).default("none"))
    .option("--grpc-infer-thread-count <n>", "accepted for Triton's scripts; no effect (Node serves every call on one event loop, inference runs in the model instances' threads)", parseInteger(1), 2)
    .addOption(new Option("--model-control-mode <mode>", "none: load all at start; explicit: load --load-model at start, then load/unload API; poll: load all at start, then follow the repository").choices(["none", "explicit", "poll"]).default("none"))
    .addOption(new Option("--model-symlinks <policy>", "inside: a file a model reads (config, labels, model file, warmup data) must resolve inside the model's directory after symlinks, and a linked model directory inside its repository; any: follow every symlink, as Triton does (only for repositories whose every writer you trust)").choices(["inside", "any"]).default("inside"))
    .option("--repository-poll-secs <secs>", "poll mode: how often the repository is rescanned for new, changed and removed models", parseInteger(1), 15)
    .option("--load-model <name>", "model to load at start in explicit mode; '*' loads all; repeatable", collect, [])
    .option("--backend-config <config>", "onnxruntime,intra_op_thread_count=N | onnxruntime,default-max-batch-size=N; repeatable", collect, [])
    .option("--cache-config <config>", "local,size=<bytes>: the response cache that models with response_cache { enable: true } use; repeatable", collect, [])
    .option(
      "--heap-growing-percent <percent>",
      "how far the JS heap may grow past its live size before the next full GC (V8's --heap-growing-percent; 0 = V8's adaptive default, which collects about once a second under large-tensor load)",
      parseInteger(0, 1000), DEFAULT_HEAP_GROWING_PERCENT,
    )
    .addOption(booleanFlag(
      "--allocation-site-pretenuring",
      "V8's --allocation-site-pretenuring: allocate objects of sites whose objects mostly outlived a young collection straight into the old generation. Off by default: once unary gRPC calls with large tensors had made V8 pretenure their per-call objects, every later large request kept its tensor buffers until a full GC",
      false,
    ))
    .option("--instance-restart-backoff-ms <ms>", "delay before a model instance whose worker thread died is restarted; doubles with each consecutive failure", parseInteger(0), 100)
    .option("--instance-restart-max-backoff-ms <ms>", "longest delay between restarts of one instance", parseInteger(0), 10_000)
    .option("--trace-config <config>", "[triton,]file=<path> | triton,log-frequency=N | rate=N | level=OFF|TIMESTAMPS | count=N (-1: no limit) | mode=triton; repeatable", collect, [])
    .option("--trace-max-pending-bytes <bytes>", "bytes of traces a trace file may hold back (being written, or collected for a log-frequency group); beyond it traces are dropped or a group is written early", parseInteger(1), 64 * 1024 * 1024)
    .addOption(booleanFlag("--allow-client-shm", "let clients register system shared memory regions (files of this host's /dev/shm); off by default, as in Triton since 26.05", false))
    .addOption(booleanFlag("--allow-model-code-upload", "let the model repository API's load requests carry model code in file: overrides (a TypeScript model's model.js, scripts, native libraries), which then runs on this server; off by default: anyone who reaches the load API could run anything", false))
    .option("--max-shared-memory-regions <n>", "most system shared memory regions registered at once; each keeps its /dev/shm file open", parseInteger(1), 256)
    .option("--max-shared-memory-input-bytes <bytes>", "most bytes one request may read from shared memory, all its inputs together (they are copied into the server's memory)", parseInteger(1), 1 << 26)
    .option("--max-inflight-request-bytes <bytes>", "most bytes all requests in flight may hold at once (HTTP bodies, gRPC messages and the tensors decoded from them, both protocols together); a request that does not fit is answered 503 / RESOURCE_EXHAUSTED", parseInteger(1), DEFAULT_MAX_INFLIGHT_REQUEST_BYTES);
  return addNetworkOptions(command);
}

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

function optionsFrom(o: Record<string, unknown>, secrets: SecretSources | undefined): ServerOptions {
  const modelRepositories = [...(o["modelRepository"] as string[]), ...(o["modelStore"] as string[])];
  if (modelRepositories.length === 0) throw new InvalidArgumentError("--model-repository is required");
  const backendConfig = parseBackendConfig(o["backendConfig"] as string[]);
  const strictModelConfig = o["strictModelConfig"] as boolean | undefined;
  const instanceRestartBackoffMs = o["instanceRestartBackoffMs"] as number;
  const instanceRestartMaxBackoffMs = o["instanceRestartMaxBackoffMs"] as number;
  if (instanceRestartMaxBackoffMs < instanceRestartBackoffMs) {
    throw new InvalidArgumentError(`--instance-restart-max-backoff-ms ${instanceRestartMaxBackoffMs} is below --instance-restart-backoff-ms ${instanceRestartBackoffMs}`);
  }
  return {
    modelRepositories,
    id: o["id"] as string,
    httpAddress: o["httpAddress"] as string, httpPort: o["httpPort"] as number,
    grpcAddress: o["grpcAddress"] as string, grpcPort: o["grpcPort"] as number,
    metricsAddress: o["metricsAddress"] as string, metricsPort: o["metricsPort"] as number,
    allowHttp: o["allowHttp"] as boolean, allowGrpc: o["allowGrpc"] as boolean, allowMetrics: o["allowMetrics"] as boolean,
    allowCpuMetrics: o["allowCpuMetrics"] as boolean, allowGpuMetrics: o["allowGpuMetrics"] as boolean,
    allowSoftwareGpu: o["allowSoftwareGpu"] as boolean,
    metricsIntervalMs: o["metricsIntervalMs"] as number,
    strictReadiness: o["strictReadiness"] as boolean,
    exitOnError: o["exitOnError"] as boolean,
    exitTimeoutSecs: o["exitTimeoutSecs"] as number,
    autoCompleteConfig: !(o["disableAutoCompleteConfig"] as boolean) && strictModelConfig !== true,
    logVerbose: o["logVerbose"] as number,
    logInfo: o["logInfo"] as boolean, logWarning: o["logWarning"] as boolean, logError: o["logError"] as boolean,
    logFormat: o["logFormat"] as ServerOptions["logFormat"],
    httpMaxInputSize: o["httpMaxInputSize"] as number,
    grpcMaxMessageSize: o["grpcMaxMessageSize"] as number,
    grpcFlowControlWindow: o["grpcFlowControlWindow"] as number,
    grpcInferResponseCompression: o["grpcInferResponseCompressionLevel"] as GrpcCompressionLevel,
    modelControlMode: o["modelControlMode"] as ServerOptions["modelControlMode"],
    repositoryPollSecs: o["repositoryPollSecs"] as number,
    loadModels: o["loadModel"] as string[],
    intraOpThreads: backendConfig.intraOpThreads,
    defaultMaxBatchSize: backendConfig.defaultMaxBatchSize,
    cpuCount: os.availableParallelism(),
    heapGrowingPercent: o["heapGrowingPercent"] as number,
    allocationSitePretenuring: o["allocationSitePretenuring"] as boolean,
    responseCacheBytes: parseCacheConfig(o["cacheConfig"] as string[]),
    instanceRestartBackoffMs,
    instanceRestartMaxBackoffMs,
    maxBytesElements: o["maxBytesElements"] as number,
    maxBytesElementSize: o["maxBytesElementSize"] as number,
    modelCallMaxDepth: o["modelCallMaxDepth"] as number,
    modelSymlinks: o["modelSymlinks"] as ServerOptions["modelSymlinks"],
    traceSetting: parseTraceConfig(o["traceConfig"] as string[]),
    traceMaxPendingBytes: o["traceMaxPendingBytes"] as number,
    allowClientShm: o["allowClientShm"] as boolean,
    allowModelCodeUpload: o["allowModelCodeUpload"] as boolean,
    maxSharedMemoryRegions: o["maxSharedMemoryRegions"] as number,
    maxSharedMemoryInputBytes: o["maxSharedMemoryInputBytes"] as number,
    maxInflightRequestBytes: o["maxInflightRequestBytes"] as number,
    ...parseNetworkOptions(o, secrets),
  };
}

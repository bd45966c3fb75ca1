/**
 * How the server's flags become its parts: the core with its backends, and each frontend's settings. The server's
 * composition root (main.ts) uses these, and so does the gRPC transport benchmark, which serves one core over
 * several transports and must see exactly the server's defaults.
 */
import type { Backend } from "./backends/backend";
import { IdentityBackend } from "./backends/identity-backend";
import { OnnxruntimeBackend } from "./backends/onnxruntime/onnxruntime-backend";
import { TypeScriptBackend } from "./backends/typescript/typescript-backend";
import type { ServerOptions } from "./cli/server-options";
import { InferenceCore } from "./core/index";
import { type Tracer } from "./tracing/index";
import type { GrpcServerOptions } from "./frontends/grpc/grpc-server";
import type { HttpServerOptions } from "./frontends/http/http-server";
import type { RequestBytesBudget } from "./frontends/request-bytes-budget";
import type { SystemSharedMemory } from "./frontends/shared-memory/system-shared-memory";
import type { LogSettings } from "./logging/log-settings";

/** What the core needs from its surroundings beyond the flags. */
export interface CoreEnvironment {
  readonly serverVersion: string;
  readonly gpuCount: number;
  /** Whether the one GPU counted is a software WebGPU adapter (`--allow-software-gpu` without an NVIDIA GPU). */
  readonly softwareGpu?: boolean;
  readonly log: { info(message: string): void; warn(message: string): void };
}

/** The core the flags describe, with every backend; not started. */
export function createCore(options: ServerOptions, environment: CoreEnvironment): InferenceCore {
  return new InferenceCore({
    modelRepositories: options.modelRepositories,
    serverName: options.id,
    serverVersion: environment.serverVersion,
    strictReadiness: options.strictReadiness,
    exitOnError: options.exitOnError,
    modelControlMode: options.modelControlMode,
    repositoryPollMs: options.repositoryPollSecs * 1000,
    responseCacheBytes: options.responseCacheBytes,
    log: environment.log,
    startupModels: options.loadModels,
    requestLimits: { maxBytesElements: options.maxBytesElements, maxBytesElementSize: options.maxBytesElementSize },
    streamBacklog: options.maxStreamBacklog,
    maxModelCallDepth: options.modelCallMaxDepth,
    allowModelCodeUpload: options.allowModelCodeUpload,
    loader: {
      autoCompleteConfig: options.autoCompleteConfig,
      backends: new Map<string, Backend>([
        ["onnxruntime", new OnnxruntimeBackend()], ["identity", new IdentityBackend()], ["typescript", new TypeScriptBackend()],
      ]),
      gpuCount: environment.gpuCount,
      softwareGpu: environment.softwareGpu === true,
      cpuCount: options.cpuCount,
      defaultMaxBatchSize: options.defaultMaxBatchSize,
      intraOpThreads: options.intraOpThreads,
      instanceRestart: { initialBackoffMs: options.instanceRestartBackoffMs, maxBackoffMs: options.instanceRestartMaxBackoffMs },
      modelSymlinks: options.modelSymlinks,
    },
  });
}

/** What both frontends share: one tracer, one log, one set of shared-memory regions, one in-flight budget. */
export interface SharedFrontendParts {
  readonly tracer: Tracer;
  readonly logSettings: LogSettings;
  readonly sharedMemory: SystemSharedMemory;
  readonly requestBudget: RequestBytesBudget;
}

export function httpServerOptions(options: ServerOptions, shared: SharedFrontendParts): HttpServerOptions {
  return {
    maxInputBytes: options.httpMaxInputSize, limits: options.httpLimits, tls: options.httpTls, restrictions: options.httpRestrictedApis,
    allowedHosts: options.httpAllowedHosts, ...shared,
  };
}

export function grpcServerOptions(options: ServerOptions, shared: SharedFrontendParts): GrpcServerOptions {
  return {
    host: options.grpcAddress, port: options.grpcPort, maxMessageBytes: options.grpcMaxMessageSize, flowControlWindowBytes: options.grpcFlowControlWindow, maxFrameBytes: options.grpcMaxFrameSize,
    inferResponseCompression: options.grpcInferResponseCompression, limits: options.grpcLimits, tls: options.grpcTls,
    restrictions: options.grpcRestrictedProtocols, ...shared,
  };
}

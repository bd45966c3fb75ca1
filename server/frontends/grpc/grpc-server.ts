import {
  Server, ServerCredentials, type ServerInterceptingCall, type ServerInterceptor, type ServerOptions, type ServiceDefinition,
} from "@grpc/grpc-js";
import type { InferenceCore } from "../../core/index";
import type { Tracer } from "../../tracing/index";
import type { LogSettings } from "../../logging/log-settings";
import type { ApiRestrictions } from "../api-restrictions";
import type { ServerTls } from "../server-tls";
import { loadGrpcServiceDefinitions } from "./grpc-service-definitions";
import { healthServiceHandlers } from "./health-service";
import { configureHttp2Servers } from "./http2-servers";
import { checkGrpcCallInternals, grpcCallInternals } from "./grpc-call-internals";
import type { SystemSharedMemory } from "../shared-memory/system-shared-memory";
import { inferenceServiceHandlers } from "./inference-service";
import { GrpcInferRequestDecoder, offThreadDeserializer } from "./off-thread-infer-request";
import type { ModelInferRequest__Output } from "../../../protocol/grpc-types/longs-as-strings/inference/ModelInferRequest";
import type { StreamInferSession } from "./model-stream-infer";
import { restrictedProtocolInterceptor } from "./restricted-protocol-interceptor";
import type { GrpcCompressionLevel } from "./response-compression";
import type { RequestBytesBudget } from "../request-bytes-budget";

/** How long connections live and how much one client may ask of the endpoint at once. */
export interface GrpcConnectionLimits {
  /** Triton's --grpc-keepalive-time: ping a connection after this long without activity. */
  readonly keepaliveTimeMs: number;
  /** Triton's --grpc-keepalive-timeout: close the connection when a ping is not answered within this. */
  readonly keepaliveTimeoutMs: number;
  /** GOAWAY to a connection with no call for this long (one that never sent anything included); 0 = never. */
  readonly maxConnectionIdleMs: number;
  /** Triton's --grpc-max-connection-age: GOAWAY to every connection after this long; 0 = never. */
  readonly maxConnectionAgeMs: number;
  /** Triton's --grpc-max-connection-age-grace: then this long for calls in flight before it is cut; 0 = unlimited. */
  readonly maxConnectionAgeGraceMs: number;
  /** HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS: most calls open at once on one connection. */
  readonly maxConcurrentStreams: number;
  /**
   * A call's request must arrive within this (a unary call's message and end from the call's start, each message of
   * ModelStreamInfer from its first byte), else DEADLINE_EXCEEDED or RST_STREAM; so must a TLS handshake. 0 = no
   * limit (a TLS handshake then gets Node's 120 s).
   */
  readonly requestTimeoutMs: number;
  /** Longest time a client takes nothing of a response; its stream is reset. 0 = never. */
  readonly writeTimeoutMs: number;
  /** Most connections open at once (per listening address); more are closed as they are accepted. 0 = no limit. */
  readonly maxConnections: number;
}

export interface GrpcServerOptions {
  /** Triton's --grpc-address; an IPv6 address may be given bare. */
  readonly host: string;
  /** Triton's --grpc-port; 0 picks a free port. */
  readonly port: number;
  /**
   * Triton's --grpc-max-message-size: the largest message received or sent. A larger request is refused with
   * RESOURCE_EXHAUSTED before it is decoded; a larger response ends its call with RESOURCE_EXHAUSTED.
   */
  readonly maxMessageBytes: number;
  /** HTTP/2 receive window, per stream and per connection, that clients may fill without waiting for the server. */
  readonly flowControlWindowBytes: number;
  /** The largest HTTP/2 frame clients may send (SETTINGS_MAX_FRAME_SIZE). */
  readonly maxFrameBytes: number;
  readonly limits: GrpcConnectionLimits;
  /** Serve TLS instead of plaintext HTTP/2 (Triton's --grpc-use-ssl and friends). */
  readonly tls?: ServerTls;
  /** Triton's --grpc-restricted-protocol. */
  readonly restrictions: ApiRestrictions;
  /** Samples inference requests for Triton's trace extension and owns its settings. */
  readonly tracer: Tracer;
  /** The system shared memory regions, shared with the HTTP frontend. */
  readonly sharedMemory: SystemSharedMemory;
  /** The root logger and its settings, which the LogSettings RPC reads and changes. */
  readonly logSettings: LogSettings;
  /** Bytes of requests in flight, shared with the HTTP frontend (--max-inflight-request-bytes). */
  readonly requestBudget: RequestBytesBudget;
  /** Triton's --grpc-infer-response-compression-level (default none). */
  readonly inferResponseCompression?: GrpcCompressionLevel;
}

/** A started gRPC endpoint. */
export interface GrpcEndpoint {
  /** The port actually bound. */
  readonly port: number;
  /**
   * Stops taking calls, lets unary calls in flight finish, and ends each open ModelStreamInfer once the
   * responses it owes are written. Resolves when the server has stopped.
   */
  close(): Promise<void>;
}

/**
 * grpc-js's server has no ping-strike policing and no `keepalive_permit_without_calls`, so Triton's
 * `http2.max_pings_without_data`, `min_recv_ping_interval_without_data_ms`, `max_ping_strikes` and
 * permit-without-calls flags have no equivalent here.
 */
function connectionOptions(limits: GrpcConnectionLimits): ServerOptions {
  return {
    // grpc-js tracks every call and connection for channelz (counters, timestamps, closures per call), which only a
    // channelz service reads; the endpoint serves none. Off: 3-5% more unary calls per second (issue 26).
    "grpc.enable_channelz": 0,
    "grpc.keepalive_time_ms": limits.keepaliveTimeMs,
    "grpc.keepalive_timeout_ms": limits.keepaliveTimeoutMs,
    "grpc.max_concurrent_streams": limits.maxConcurrentStreams,
    // grpc-js reads an absent option as "never"; 0 is Triton's way to say so.
    ...(limits.maxConnectionIdleMs > 0 ? { "grpc.max_connection_idle_ms": limits.maxConnectionIdleMs } : {}),
    ...(limits.maxConnectionAgeMs > 0 ? { "grpc.max_connection_age_ms": limits.maxConnectionAgeMs } : {}),
    ...(limits.maxConnectionAgeGraceMs > 0 ? { "grpc.max_connection_age_grace_ms": limits.maxConnectionAgeGraceMs } : {}),
  };
}

/**
 * grpc-js's TLS credentials with a bound on the TLS handshake: its `createSsl` leaves Node's 120 s, for which a
 * client that connects and never completes its handshake holds the connection. ServerCredentials' constructor takes
 * the options of Node's secure HTTP/2 server, so this keeps everything `createSsl` chose and adds the timeout.
 */
class HandshakeBoundCredentials extends ServerCredentials {
  constructor(base: ServerCredentials, handshakeTimeoutMs: number) {
    super({ ...base._getConstructorOptions(), handshakeTimeout: handshakeTimeoutMs }, base._getSecureContextOptions() ?? undefined);
  }

  _equals(other: ServerCredentials): boolean {
    return other === this;
  }
}

function credentialsOf(tls: ServerTls | undefined, handshakeTimeoutMs: number): ServerCredentials {
  if (tls === undefined) return ServerCredentials.createInsecure();
  const credentials = ServerCredentials.createSsl(tls.rootCert ?? null, [{ cert_chain: tls.cert, private_key: tls.key }], tls.mutual);
  return handshakeTimeoutMs > 0 ? new HandshakeBoundCredentials(credentials, handshakeTimeoutMs) : credentials;
}

/** The paths of the methods whose client sends a stream of messages (ModelStreamInfer). */
function clientStreamingPaths(...services: ServiceDefinition[]): Set<string> {
  return new Set(services.flatMap((service) => Object.values(service).filter((method) => method.requestStream).map((method) => method.path)));
}

/**
 * Triton's --log-verbose 1 line for every call (never its metadata: it may carry a restricted protocol's value),
 * checked per call as the verbose level may change at run time (LogSettings).
 */
function callLogger(logSettings: LogSettings): ServerInterceptor {
  return (method, call) => {
    if (logSettings.verbose) logSettings.logger.debug(`gRPC call: ${method.path}`);
    // grpc-js declares a ServerInterceptingCall but uses only its interface: handing the call on as it is adds no
    // layer to each of its messages.
    return call as ServerInterceptingCall;
  };
}

function bindAddress(host: string, port: number): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * Serves `inference.GRPCInferenceService` and `grpc.health.v1.Health` for the core on host:port, over plaintext
 * HTTP/2 or TLS. Rejects when the address cannot be bound.
 */
export async function startGrpcServer(core: InferenceCore, options: GrpcServerOptions): Promise<GrpcEndpoint> {
  const { limits, logSettings } = options;
  const logger = logSettings.logger;
  checkGrpcCallInternals();
  const definitions = loadGrpcServiceDefinitions();
  const server = new Server({
    ...connectionOptions(limits),
    "grpc.max_receive_message_length": options.maxMessageBytes,
    "grpc.max_send_message_length": options.maxMessageBytes,
    interceptors: [
      grpcCallInternals(options.requestBudget),
      callLogger(logSettings),
      ...(options.restrictions.size > 0 ? [restrictedProtocolInterceptor(options.restrictions)] : []),
    ],
  });
  const streams = new Set<StreamInferSession>();
  const decoder = new GrpcInferRequestDecoder();
  const modelInfer = definitions.inference["ModelInfer"]!;
  const modelStreamInfer = definitions.inference["ModelStreamInfer"]!;
  const deserialize = offThreadDeserializer(modelInfer.requestDeserialize as (bytes: Buffer) => ModelInferRequest__Output);
  const inference = {
    ...definitions.inference,
    ModelInfer: { ...modelInfer, requestDeserialize: deserialize },
    ModelStreamInfer: { ...modelStreamInfer, requestDeserialize: deserialize },
  };
  server.addService(inference, inferenceServiceHandlers(
    core, logSettings, streams, options.tracer, options.sharedMemory, options.requestBudget, modelInfer.responseSerialize, decoder,
  ));
  server.addService(definitions.health, healthServiceHandlers(core, logger));
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(bindAddress(options.host, options.port), credentialsOf(options.tls, limits.requestTimeoutMs), (error, boundPort) =>
      error ? reject(error) : resolve(boundPort));
  });
  const clientStreaming = clientStreamingPaths(definitions.inference, definitions.health);
  const configured = configureHttp2Servers(server, {
    windowBytes: options.flowControlWindowBytes,
    maxFrameBytes: options.maxFrameBytes,
    maxConnections: limits.maxConnections,
    inferResponseCompression: options.inferResponseCompression ?? "none",
    onConnectionRefused: () => logger.debug(`gRPC connection refused: ${limits.maxConnections} connections are open (--grpc-max-connections)`),
    streams: { requestTimeoutMs: limits.requestTimeoutMs, writeTimeoutMs: limits.writeTimeoutMs, isClientStreaming: (path) => clientStreaming.has(path), logger },
  });
  if (!configured) {
    logger.warn("this @grpc/grpc-js version hides its HTTP/2 servers: gRPC receive windows stay at 64 KiB, and --grpc-flow-control-window, --grpc-max-frame-size, "
      + "--grpc-request-timeout-ms, --grpc-write-timeout-ms, --grpc-max-connections and --grpc-infer-response-compression-level have no effect");
  }
  return {
    port,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
        for (const stream of streams) stream.finish();
      });
      await decoder.close();
    },
  };
}

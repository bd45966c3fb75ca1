import { Server, ServerCredentials, type ServerOptions } from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { InferenceCore } from "../../core/index";
import { loadGrpcServiceDefinitions } from "./grpc-service-definitions";
import { healthServiceHandlers } from "./health-service";
import { widenReceiveWindows } from "./http2-receive-window";
import { inferenceServiceHandlers } from "./inference-service";
import type { StreamInferSession } from "./model-stream-infer";

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
  readonly logger: Logger;
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
 * Triton's gRPC keepalive defaults (src/grpc/grpc_server.h): a keepalive ping after 2 h without activity and
 * 20 s to answer it. grpc-js's server has no ping-strike policing and no `keepalive_permit_without_calls`, so
 * Triton's `http2.max_pings_without_data` (2), `min_recv_ping_interval_without_data_ms` (300 000),
 * `max_ping_strikes` (2) and permit-without-calls (off) have no equivalent here.
 */
const TRITON_KEEPALIVE_OPTIONS: ServerOptions = {
  "grpc.keepalive_time_ms": 7_200_000,
  "grpc.keepalive_timeout_ms": 20_000,
};

function bindAddress(host: string, port: number): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * Serves `inference.GRPCInferenceService` and `grpc.health.v1.Health` for the core on host:port, over plaintext
 * HTTP/2. Rejects when the address cannot be bound.
 */
export async function startGrpcServer(core: InferenceCore, options: GrpcServerOptions): Promise<GrpcEndpoint> {
  const definitions = loadGrpcServiceDefinitions();
  const server = new Server({
    ...TRITON_KEEPALIVE_OPTIONS,
    "grpc.max_receive_message_length": options.maxMessageBytes,
    "grpc.max_send_message_length": options.maxMessageBytes,
  });
  const streams = new Set<StreamInferSession>();
  server.addService(definitions.inference, inferenceServiceHandlers(core, options.logger, streams));
  server.addService(definitions.health, healthServiceHandlers(core, options.logger));
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(bindAddress(options.host, options.port), ServerCredentials.createInsecure(), (error, boundPort) =>
      error ? reject(error) : resolve(boundPort));
  });
  if (!widenReceiveWindows(server, options.flowControlWindowBytes)) {
    options.logger.warn("this @grpc/grpc-js version hides its HTTP/2 servers: gRPC receive windows stay at 64 KiB (--grpc-flow-control-window has no effect)");
  }
  return {
    port,
    close: () => new Promise<void>((resolve) => {
      server.tryShutdown(() => resolve());
      for (const stream of streams) stream.finish();
    }),
  };
}

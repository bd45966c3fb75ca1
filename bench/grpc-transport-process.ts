/**
 * Child process of `npm run bench -- --models grpc-transport`: one inference core (the example repository's
 * `simple` and `identity_fp32`) served by the server's HTTP endpoint, its grpc-js gRPC endpoint, and the two gRPC
 * candidates on `node:http2` (connect-node, our own), each on its own port, all with the server's default flags.
 * One process for all, so each side of the comparison costs the same core, and its main-thread CPU per request is
 * read from the same thread.
 */
import { createServer, type Http2Server } from "node:http2";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { parseServerOptions, applyV8HeapSettings, startGrpcServer, buildHttpServer, RequestBytesBudget, createCore, grpcServerOptions, httpServerOptions, SystemSharedMemory, LogSettings } from "../server/index";
import { Tracer } from "../server/tracing/index";
import { connectGrpcHandler } from "./grpc-transports/connect-grpc-transport";
import { serveOwnGrpc } from "./grpc-transports/own-grpc-transport";

/** The ports, as the one line this process writes to stdout when it serves. */
export interface GrpcTransportPorts {
  readonly http: number;
  readonly grpcJs: number;
  readonly connect: number;
  readonly own: number;
}

async function listen(server: Http2Server, host: string): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return (server.address() as AddressInfo).port;
}

async function main(): Promise<void> {
  const repository = process.argv[2] ?? path.join(process.cwd(), "models");
  const options = parseServerOptions([
    "--model-repository", repository, "--model-control-mode", "explicit", "--load-model", "simple", "--load-model", "identity_fp32",
    "--http-address", "127.0.0.1", "--http-port", "0", "--grpc-address", "127.0.0.1", "--grpc-port", "0", "--allow-metrics", "false", "--log-info", "false",
  ]);
  applyV8HeapSettings(options);
  const logSettings = new LogSettings({
    log_info: options.logInfo, log_warning: options.logWarning, log_error: options.logError, log_verbose_level: options.logVerbose, log_format: options.logFormat,
  });
  const core = createCore(options, { serverVersion: "bench", gpuCount: 0, log: { info: () => undefined, warn: (message) => logSettings.logger.warn(message) } });
  await core.start();
  const tracer = new Tracer({ setting: options.traceSetting, maxPendingBytes: options.traceMaxPendingBytes, log: logSettings.logger });
  const sharedMemory = new SystemSharedMemory({ allowed: false, maxRegions: options.maxSharedMemoryRegions, maxInputBytes: options.maxSharedMemoryInputBytes });
  const shared = { tracer, logSettings, sharedMemory, requestBudget: new RequestBytesBudget(options.maxInflightRequestBytes) };
  const http = buildHttpServer(core, httpServerOptions(options, shared));
  await http.listen({ host: "127.0.0.1", port: 0 });
  const grpc = await startGrpcServer(core, grpcServerOptions(options, shared));
  // The candidates get the endpoint's receive windows too (grpc-js's are widened by http2-servers.ts).
  const http2Settings = { settings: { initialWindowSize: options.grpcFlowControlWindow } };
  const widen = (server: Http2Server): Http2Server =>
    server.on("session", (session) => session.setLocalWindowSize(options.grpcFlowControlWindow));
  const connect = widen(createServer(http2Settings, connectGrpcHandler(core, shared)));
  const own = widen(createServer(http2Settings));
  serveOwnGrpc(own, core, shared);
  const ports: GrpcTransportPorts = {
    http: (http.server.address() as AddressInfo).port, grpcJs: grpc.port, connect: await listen(connect, "127.0.0.1"), own: await listen(own, "127.0.0.1"),
  };
  process.stdout.write(`${JSON.stringify({ service: "grpc-transports", ...ports })}\n`);
  process.once("SIGTERM", () => process.exit(0));
}

void main();

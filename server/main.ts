#!/usr/bin/env node
/**
 * The composition root: parses flags, wires the core to its backends and frontends, and handles signals. The only
 * module that knows every layer.
 */
import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import path from "node:path";
import v8 from "node:v8";
import { CommanderError } from "commander";
import pino from "pino";
import type { Backend } from "./backends/backend";
import { IdentityBackend } from "./backends/identity-backend";
import { OnnxruntimeBackend } from "./backends/onnxruntime/onnxruntime-backend";
import { parseServerOptions, type ServerOptions } from "./cli/server-options";
import { InferenceCore } from "./core/index";
import type { ApiRestrictions } from "./frontends/api-restrictions";
import { startGrpcServer } from "./frontends/grpc/grpc-server";
import { RESTRICTED_PROTOCOL_PREFIX } from "./frontends/grpc/restricted-protocol-interceptor";
import { buildHttpServer } from "./frontends/http/http-server";
import { countNvidiaGpus } from "./gpu-detection";
import { ServerMetrics, startMetricsServer } from "./metrics/index";

/** Which groups each header unlocks, for the log: header names only, never their values. */
function describeRestrictions(restrictions: ApiRestrictions, prefix: string): string {
  const groupsByHeader = new Map<string, string[]>();
  for (const [group, { header }] of restrictions) groupsByHeader.set(prefix + header, [...(groupsByHeader.get(prefix + header) ?? []), group]);
  return [...groupsByHeader].map(([header, groups]) => `${groups.join(",")} need header '${header}'`).join("; ");
}

const SERVER_VERSION = (JSON.parse(readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8")) as { version: string }).version;

async function run(options: ServerOptions): Promise<void> {
  const logger = pino({ level: options.logVerbose > 0 ? "debug" : "info" });
  const core = new InferenceCore({
    modelRepositories: options.modelRepositories,
    serverName: options.id,
    serverVersion: SERVER_VERSION,
    strictReadiness: options.strictReadiness,
    exitOnError: options.exitOnError,
    modelControlMode: options.modelControlMode,
    repositoryPollMs: options.repositoryPollSecs * 1000,
    responseCacheBytes: options.responseCacheBytes,
    log: { info: (message) => logger.info(message), warn: (message) => logger.warn(message) },
    startupModels: options.loadModels,
    loader: {
      autoCompleteConfig: options.autoCompleteConfig,
      backends: new Map<string, Backend>([["onnxruntime", new OnnxruntimeBackend()], ["identity", new IdentityBackend()]]),
      gpuCount: countNvidiaGpus(),
      cpuCount: options.cpuCount,
      defaultMaxBatchSize: options.defaultMaxBatchSize,
      intraOpThreads: options.intraOpThreads,
    },
  });

  try {
    await core.start();
  } catch (error) {
    logger.fatal((error as Error).message);
    await core.close();
    process.exit(1);
  }
  for (const entry of core.repositoryIndex(false)) {
    const version = entry.version ? ` version ${entry.version}` : "";
    if (entry.state === "READY") logger.info(`successfully loaded '${entry.name}'${version}`);
    else logger.error(`failed to load '${entry.name}'${version}: ${entry.reason}`);
  }

  const closers: (() => Promise<void>)[] = [];
  // Metrics first, so that every request any frontend accepts is counted.
  if (options.allowMetrics) {
    const metrics = new ServerMetrics({
      modelGauges: () => core.modelGauges(),
      cpuMetrics: options.allowCpuMetrics,
      gpuMetrics: options.allowGpuMetrics,
      intervalMs: options.metricsIntervalMs,
    });
    core.observe(metrics.observer);
    const endpoint = await startMetricsServer(metrics, { host: options.metricsAddress, port: options.metricsPort });
    logger.info({ service: "metrics", port: endpoint.port }, `Started Metrics Service at ${endpoint.address}:${endpoint.port}`);
    closers.push(async () => {
      metrics.close();
      await endpoint.close();
    });
  }

  if (options.allowHttp && options.httpRestrictedApis.size > 0) logger.info(`HTTP restricted APIs: ${describeRestrictions(options.httpRestrictedApis, "")}`);
  if (options.allowGrpc && options.grpcRestrictedProtocols.size > 0) {
    logger.info(`gRPC restricted protocols: ${describeRestrictions(options.grpcRestrictedProtocols, RESTRICTED_PROTOCOL_PREFIX)}`);
  }

  if (options.allowHttp) {
    const http = buildHttpServer(core, {
      maxInputBytes: options.httpMaxInputSize, limits: options.httpLimits, tls: options.httpTls, restrictions: options.httpRestrictedApis, logger,
    });
    await http.listen({ host: options.httpAddress, port: options.httpPort });
    const address = http.server.address() as AddressInfo;
    logger.info({ service: "http", port: address.port, tls: options.httpTls !== undefined }, `Started HTTPService at ${address.address}:${address.port}`);
    closers.push(() => http.close());
  }

  if (options.allowGrpc) {
    const grpc = await startGrpcServer(core, {
      host: options.grpcAddress, port: options.grpcPort, maxMessageBytes: options.grpcMaxMessageSize,
      limits: options.grpcLimits, tls: options.grpcTls, restrictions: options.grpcRestrictedProtocols, logger,
    });
    logger.info({ service: "grpc", port: grpc.port, tls: options.grpcTls !== undefined }, `Started GRPCInferenceService at ${options.grpcAddress}:${grpc.port}`);
    closers.push(() => grpc.close());
  }

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info(`received ${signal}, draining for up to ${options.exitTimeoutSecs} s`);
    const force = setTimeout(() => {
      logger.warn("exit timeout reached, exiting with requests still in flight");
      process.exit(1);
    }, options.exitTimeoutSecs * 1000);
    force.unref();
    void (async () => {
      await Promise.allSettled(closers.map((close) => close()));
      await core.close();
      process.exit(0);
    })();
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
}

let options: ServerOptions;
try {
  options = parseServerOptions(process.argv.slice(2));
} catch (error) {
  if (error instanceof CommanderError) process.exit(error.exitCode);
  console.error(`inference-server: ${(error as Error).message}`);
  process.exit(2);
}
// V8 reads the factor at every full collection, so setting it at run time takes effect from the next one.
v8.setFlagsFromString(`--heap-growing-percent=${options.heapGrowingPercent}`);
void run(options);

#!/usr/bin/env node
/**
 * The composition root: parses flags, wires the core to its backends and frontends, and handles signals. The only
 * module that knows every layer.
 */
import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { format } from "node:util";
import { setLogger as setGrpcLogger } from "@grpc/grpc-js";
import { CommanderError } from "@commander-js/extra-typings";
import { describeListenFailure, EXIT_CODE_CANNOT_LISTEN, type ListenFlags } from "./cli/listen-failure";
import { onNpmParentExit } from "./cli/parent-exit";
import { parseServerOptions, type ServerOptions } from "./cli/server-options";
import { Tracer } from "./tracing/index";
import type { ApiRestrictions } from "./frontends/api-restrictions";
import { startGrpcServer } from "./frontends/grpc/grpc-server";
import { RESTRICTED_PROTOCOL_PREFIX } from "./frontends/grpc/restricted-protocol-interceptor";
import { buildHttpServer } from "./frontends/http/http-server";
import { RequestBytesBudget } from "./frontends/request-bytes-budget";
import { SystemSharedMemory } from "./frontends/shared-memory/system-shared-memory";
import { detectGpus, hideSoftwareVulkanDrivers } from "./backends/gpu-detection";
import { IdleCollection } from "./memory/idle-collection";
import { applyV8HeapSettings } from "./memory/v8-heap-settings";
import { LogSettings } from "./logging/log-settings";
import { ServerMetrics, startMetricsServer } from "./metrics/index";
import { createCore, grpcServerOptions, httpServerOptions } from "./server-wiring";

/** Which groups each header unlocks, for the log: header names only, never their values. */
function describeRestrictions(restrictions: ApiRestrictions, prefix: string): string {
  const groupsByHeader = new Map<string, string[]>();
  for (const [group, { header }] of restrictions) groupsByHeader.set(prefix + header, [...(groupsByHeader.get(prefix + header) ?? []), group]);
  return [...groupsByHeader].map(([header, groups]) => `${groups.join(",")} need header '${header}'`).join("; ");
}

const SERVER_VERSION = (JSON.parse(readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8")) as { version: string }).version;

/** How long without a completed request counts as traffic having stopped. */
const IDLE_COLLECTION_INTERVAL_MS = 1000;

/** Exit status when the drain outlasted --exit-timeout-secs (0 after a complete drain). */
const EXIT_CODE_TIMED_OUT = 1;
/** Past the exit timeout, how long the answers just given (errors ending open streams) have to reach their clients. */
const FINAL_WRITES_GRACE_MS = 1000;

function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    void promise.finally(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

async function run(options: ServerOptions): Promise<void> {
  const logSettings = new LogSettings({
    log_info: options.logInfo, log_warning: options.logWarning, log_error: options.logError,
    log_verbose_level: options.logVerbose, log_format: options.logFormat,
  });
  const logger = logSettings.logger;
  const gpus = detectGpus(options.allowSoftwareGpu);
  if (!options.allowSoftwareGpu) hideSoftwareVulkanDrivers();
  if (gpus.softwareAdapter !== undefined) {
    logger.warn(`--allow-software-gpu: no NVIDIA GPU; KIND_GPU and KIND_AUTO instances run on a software WebGPU adapter (${gpus.softwareAdapter}), on the CPU`);
  } else if (options.allowSoftwareGpu && gpus.count === 0) {
    logger.warn("--allow-software-gpu: no NVIDIA GPU and no software Vulkan driver (Mesa's lavapipe) found; KIND_AUTO runs on CPU");
  }
  // grpc-js prints its own errors (a failed bind among them) as bare "E ..." lines on stderr; through the server's
  // logger they are log lines like the others, and stderr keeps the one line that names a flag to change.
  setGrpcLogger({
    error: (...args: unknown[]) => logger.error(`grpc-js: ${format(...args)}`),
    info: (...args: unknown[]) => logger.info(`grpc-js: ${format(...args)}`),
    debug: (...args: unknown[]) => logger.debug(`grpc-js: ${format(...args)}`),
  });
  const core = createCore(options, {
    serverVersion: SERVER_VERSION, gpuCount: gpus.count, softwareGpu: gpus.softwareAdapter !== undefined, log: { info: (message) => logger.info(message), warn: (message) => logger.warn(message) },
  });

  try {
    await core.start();
  } catch (error) {
    logger.fatal((error as Error).message);
    await core.close();
    process.exit(1);
  }
  if (core.initializationFailure !== undefined) logger.error(`${core.initializationFailure}; serving without models, neither live nor ready`);
  for (const entry of core.repositoryIndex(false)) {
    const version = entry.version ? ` version ${entry.version}` : "";
    if (entry.state === "READY") logger.info(`successfully loaded '${entry.name}'${version}`);
    else logger.error(`failed to load '${entry.name}'${version}: ${entry.reason}`);
  }

  const closers: (() => Promise<void>)[] = [];
  // A port in use is a flag to change, not a crash: one line naming it (no stack trace), and the endpoints and
  // models already started are closed before exiting.
  const listening = async <T>(flags: ListenFlags, start: () => Promise<T>): Promise<T> => {
    try {
      return await start();
    } catch (error) {
      const line = describeListenFailure(error, flags);
      if (line === undefined) throw error;
      console.error(`inference-server: ${line}`);
      await Promise.allSettled(closers.map((close) => close()));
      await core.close();
      process.exit(EXIT_CODE_CANNOT_LISTEN);
    }
  };
  const tracer = new Tracer({ setting: options.traceSetting, maxPendingBytes: options.traceMaxPendingBytes, log: logger });
  const idleCollection = new IdleCollection(IDLE_COLLECTION_INTERVAL_MS);
  core.observe(idleCollection.observer);
  closers.push(async () => idleCollection.close());
  // Metrics first, so that every request any frontend accepts is counted.
  if (options.allowMetrics) {
    const metrics = new ServerMetrics({
      modelGauges: () => core.modelGauges(),
      ensembleSteps: () => core.ensembleSteps(),
      cpuMetrics: options.allowCpuMetrics,
      gpuMetrics: options.allowGpuMetrics,
      intervalMs: options.metricsIntervalMs,
    });
    core.observe(metrics.observer);
    const endpoint = await listening({ service: "metrics", address: options.metricsAddress, port: options.metricsPort }, () => startMetricsServer(metrics, {
      host: options.metricsAddress, port: options.metricsPort,
      onThreadError: (error) => logger.error(`the metrics endpoint stopped: ${error.message}`),
    }));
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

  // One set of regions for both frontends, as in Triton; closed after them (files in use close when their requests end).
  const sharedMemory = new SystemSharedMemory({
    allowed: options.allowClientShm, maxRegions: options.maxSharedMemoryRegions, maxInputBytes: options.maxSharedMemoryInputBytes,
  });
  // One budget for both frontends: a server's memory does not care which protocol a request came by.
  const frontendParts = { tracer, logSettings, sharedMemory, requestBudget: new RequestBytesBudget(options.maxInflightRequestBytes) };
  const frontendClosers: (() => Promise<void>)[] = [];
  // For a drain past its deadline: connections whose clients do not take their answers are closed (a gRPC call's
  // write timeout resets it on its own).
  const frontendForcers: (() => void)[] = [];
  closers.push(async () => {
    await Promise.allSettled(frontendClosers.map((close) => close()));
    await sharedMemory.unregister();
  });

  if (options.allowHttp) {
    const http = buildHttpServer(core, httpServerOptions(options, frontendParts));
    await listening({ service: "http", address: options.httpAddress, port: options.httpPort }, () => http.listen({ host: options.httpAddress, port: options.httpPort }));
    const address = http.server.address() as AddressInfo;
    logger.info({ service: "http", port: address.port, tls: options.httpTls !== undefined }, `Started HTTPService at ${address.address}:${address.port}`);
    frontendClosers.push(() => http.close());
    frontendForcers.push(() => http.closeAllButWorking());
  }

  if (options.allowGrpc) {
    const grpc = await listening({ service: "grpc", address: options.grpcAddress, port: options.grpcPort }, () => startGrpcServer(core, grpcServerOptions(options, frontendParts)));
    logger.info({ service: "grpc", port: grpc.port, tls: options.grpcTls !== undefined }, `Started GRPCInferenceService at ${options.grpcAddress}:${grpc.port}`);
    frontendClosers.push(() => grpc.close());
  }

  let stopping = false;
  const stop = (why: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info(`${why}, draining for up to ${options.exitTimeoutSecs} s`);
    void (async () => {
      const drained = (async () => {
        await Promise.allSettled(closers.map((close) => close()));
        await core.close();
        await tracer.close();
      })();
      if (!(await settlesWithin(drained, options.exitTimeoutSecs * 1000))) {
        // Terminating a worker thread inside an ONNX Runtime run aborts the whole process (SIGABRT), and a request
        // cut off mid-queue would be reset. So: refuse what waits, end open streams, let what runs finish, then exit.
        logger.warn("exit timeout reached: refusing queued requests and ending open streams (503 / UNAVAILABLE), finishing running executions");
        core.abandon(`Server is shutting down: the exit timeout (${options.exitTimeoutSecs} s) passed before this request ended`);
        if (!(await settlesWithin(drained, FINAL_WRITES_GRACE_MS))) {
          logger.warn(`closing the connections whose clients did not take their responses within ${FINAL_WRITES_GRACE_MS} ms`);
          for (const force of frontendForcers) force();
        }
        await drained;
        process.exit(EXIT_CODE_TIMED_OUT);
      }
      process.exit(0);
    })();
  };
  process.once("SIGTERM", () => stop("received SIGTERM"));
  process.once("SIGINT", () => stop("received SIGINT"));
  // `npm start` / `npx inference-server` stopped by PID: npm's shell took the signal and exited; stop as on SIGTERM.
  onNpmParentExit(() => stop("npm, which started the server, exited"));
}

let options: ServerOptions;
try {
  options = parseServerOptions(process.argv.slice(2));
} catch (error) {
  if (error instanceof CommanderError) process.exit(error.exitCode);
  console.error(`inference-server: ${(error as Error).message}`);
  process.exit(2);
}
applyV8HeapSettings(options);
void run(options);

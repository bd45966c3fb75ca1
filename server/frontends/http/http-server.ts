import { pipeline } from "node:stream";
import zlib from "node:zlib";
import Fastify, {
  type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions, LogController, type onRequestHookHandler,
} from "fastify";
import {
  answerTraceSetting, Cancellation, InferenceError, type InferenceCore, refuseRepositoryName, type Tracer,
} from "../../core/index";
import type { LogSettings } from "../../logging/log-settings";
import { type ApiGroup, type ApiRestrictions, unlocker } from "../api-restrictions";
import type { ServerTls } from "../server-tls";
import { inferWithSharedMemory } from "../shared-memory/tensor-shared-memory";
import type { SystemSharedMemory } from "../shared-memory/system-shared-memory";
import { sharedMemoryRegistration } from "./shared-memory-requests";
import { clientErrorHandler } from "./client-error-handler";
import { ConnectionTimeouts } from "./connection-timeouts";
import { chooseResponseEncoding, decodeRequestBody, encodeResponseBody } from "./content-encoding";
import { crossSiteRefusal } from "./cross-site-guard";
import { httpStatusOf } from "./http-status";
import { traceHttpExchange } from "./http-trace";
import { type EncodedInferResponse, encodeInferResponse } from "./infer-response-codec";
import { InferRequestDecoder } from "./json-request-decoder";
import { loadOverridesOf, parseRepositoryBody, unloadDependentsOf } from "./repository-requests";
import { traceSettingRequestOf } from "./trace-setting-body";

/** How long the endpoint waits on a client, and how many clients it holds at once. 0 turns a timeout off. */
export interface HttpConnectionLimits {
  /** A request's headers must arrive within this (Node's headersTimeout); else 408. */
  readonly headerTimeoutMs: number;
  /** The whole request, body included, must arrive within this (Node's requestTimeout); else 408. */
  readonly requestTimeoutMs: number;
  /** Longest silence of a client that owes (part of) a request, or its first byte; the connection is closed. */
  readonly idleTimeoutMs: number;
  /** Longest time a client takes nothing of its response; the connection is closed. */
  readonly writeTimeoutMs: number;
  /** How long an idle keep-alive connection is kept. */
  readonly keepAliveTimeoutMs: number;
  /** Most connections open at once; more are closed as they are accepted. 0 = no limit. */
  readonly maxConnections: number;
}

export interface HttpServerOptions {
  /** Triton's --http-max-input-size: largest request body, before and after decompression. */
  readonly maxInputBytes: number;
  readonly limits: HttpConnectionLimits;
  /** Serve HTTPS instead of HTTP (--http-use-ssl and friends). */
  readonly tls?: ServerTls;
  /** Triton's --http-restricted-api. */
  readonly restrictions: ApiRestrictions;
  /** Samples inference requests for Triton's trace extension and owns its settings. */
  readonly tracer: Tracer;
  /** The root logger and its settings, which `/v2/logging` reads and changes. */
  readonly logSettings: LogSettings;
  /** The system shared memory regions, shared with the gRPC frontend. */
  readonly sharedMemory: SystemSharedMemory;
}

type ModelParams = { model: string; version?: string };

const HEADER_LENGTH = "inference-header-content-length";

function errorBody(message: string): string {
  return JSON.stringify({ error: message });
}

function sendError(reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply.code(status).type("application/json").send(errorBody(message));
}

function versionOf(params: ModelParams): string | undefined {
  const version = params.version;
  if (version !== undefined && !/^[0-9]+$/.test(version)) {
    throw new InferenceError("INVALID_ARG", `model version '${version}' is not a number: versions in the URL are numeric`);
  }
  return version;
}

function headerLengthOf(request: FastifyRequest): number | undefined {
  const raw = request.headers[HEADER_LENGTH];
  if (raw === undefined) return undefined;
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined || !/^[0-9]+$/.test(value.trim())) {
    throw new InferenceError("INVALID_ARG", `Inference-Header-Content-Length must be a non-negative integer, got '${value}'`);
  }
  return Number(value);
}

/** Cancelled when the client disconnects before its response is written, so queued work can be dropped. */
function clientGone(reply: FastifyReply): Cancellation {
  const cancellation = new Cancellation();
  // The response closes early exactly when the client went away (or the socket broke) before the answer.
  reply.raw.once("close", () => {
    if (!reply.raw.writableFinished) cancellation.abort();
  });
  return cancellation;
}

/**
 * Sends an infer response. As Triton, only a successful inference response is compressed (per Accept-Encoding):
 * clients that ask for compression and then do not decompress (aiohttp, as tritonclient.http.aio sets it up) read
 * every other answer as it is.
 */
async function sendInferResponse(reply: FastifyReply, encoded: EncodedInferResponse, contentEncoding: "gzip" | "deflate" | undefined): Promise<FastifyReply> {
  if (encoded.headerLength === undefined) reply.type("application/json");
  else reply.type("application/octet-stream").header(HEADER_LENGTH, encoded.headerLength);
  if (contentEncoding !== undefined) reply.header("content-encoding", contentEncoding);
  const body = encoded.body;
  if (body.kind === "buffer") return reply.send(contentEncoding === undefined ? body.bytes : await encodeResponseBody(body.bytes, contentEncoding));
  if (contentEncoding === undefined) {
    if (body.byteLength !== undefined) reply.header("content-length", body.byteLength);
    return reply.send(body.stream);
  }
  const compressor = contentEncoding === "gzip" ? zlib.createGzip() : zlib.createDeflate();
  // A failure of either stream destroys the compressor, which fastify watches: the response is cut short.
  pipeline(body.stream, compressor, () => undefined);
  return reply.send(compressor);
}

/**
 * The KServe v2 REST frontend (Triton's HTTP endpoint): health, metadata, config, statistics, repository and
 * infer routes, binary tensor data, gzip/deflate request bodies and (as Triton) compressed inference responses,
 * and Triton's `{"error": "..."}` shape and status codes for every failure, fastify's own included. It sends no
 * CORS headers, and refuses model load/unload requests a page on another site could make.
 */
export function buildHttpServer(core: InferenceCore, options: HttpServerOptions): FastifyInstance {
  const { limits, tracer, logSettings, sharedMemory } = options;
  const logger = logSettings.logger;
  // Node checks header and request deadlines on a timer; check often enough that they are kept within ~10%.
  const deadlines = [limits.headerTimeoutMs, limits.requestTimeoutMs].filter((ms) => ms > 0);
  const nodeServerOptions = {
    headersTimeout: limits.headerTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    connectionsCheckingInterval: Math.min(1000, Math.max(10, Math.floor(Math.min(...deadlines, 10_000) / 10))),
  };
  const tls = options.tls;
  const serverOptions: FastifyServerOptions & { https?: object; http?: object } = {
    loggerInstance: logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    // Triton's --log-verbose 1 line for every request (never its headers: they may carry a restricted API's value),
    // checked per request as the verbose level may change at run time (/v2/logging). Written where fastify makes
    // the request's logger, not in a global onRequest hook: with one, clients that never read their large
    // responses were not cut off at the write timeout under load (tests/e2e/large-json.test.ts).
    childLoggerFactory: (parent, bindings, childOptions, raw) => {
      const child = parent.child(bindings, childOptions);
      if (logSettings.verbose) child.debug(`HTTP request: ${raw.method} ${raw.url}`);
      return child;
    },
    bodyLimit: options.maxInputBytes,
    // Inference bodies can be large; 'Expect: 100-continue' clients get their continue from Node.
    return503OnClosing: true,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    connectionTimeout: limits.idleTimeoutMs,
    clientErrorHandler: clientErrorHandler(
      `headers within ${limits.headerTimeoutMs} ms (--http-header-timeout-ms), the whole request within ${limits.requestTimeoutMs} ms (--http-request-timeout-ms)`,
    ),
    ...(tls === undefined
      ? { http: nodeServerOptions }
      : {
        https: {
          ...nodeServerOptions, cert: tls.cert, key: tls.key, ca: tls.rootCert, requestCert: tls.mutual, rejectUnauthorized: tls.mutual,
          // The HTTP timeouts start once TLS is up; a client that never completes its handshake is its own case.
          handshakeTimeout: limits.idleTimeoutMs > 0 ? limits.idleTimeoutMs : 120_000,
        },
      }),
  };
  const app = Fastify(serverOptions) as unknown as FastifyInstance;
  app.server.maxConnections = limits.maxConnections;
  app.server.on("drop", () => logger.debug(`connection refused: ${limits.maxConnections} connections are open (--http-max-connections)`));
  const timeouts = new ConnectionTimeouts(app.server, limits.idleTimeoutMs, limits.writeTimeoutMs);
  const decoder = new InferRequestDecoder();
  app.addHook("onClose", async () => decoder.close());

  // Every body is read as bytes: infer bodies mix a JSON header with binary tensors.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: options.maxInputBytes }, (_request, body, done) => done(null, body));

  app.setErrorHandler((error: Error & { statusCode?: number; code?: string }, request, reply) => {
    if (error instanceof InferenceError) {
      // Refusals (unsupported, unavailable, overloaded) are answers, not server faults: logged only when verbose.
      if (error.code === "INTERNAL") request.log.error({ err: error }, "request failed");
      else request.log.debug({ code: error.code, reason: error.message }, "request refused");
      return sendError(reply, httpStatusOf(error.code), error.message);
    }
    const status = error.statusCode !== undefined && error.statusCode >= 400 ? error.statusCode : 500;
    if (error.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
      return sendError(reply, 413, `request body exceeds the maximum allowed size of ${options.maxInputBytes} bytes (--http-max-input-size)`);
    }
    if (status >= 500) request.log.error({ err: error }, "request failed");
    return sendError(reply, status, status >= 500 ? "internal server error" : error.message);
  });
  app.setNotFoundHandler((_request, reply) => sendError(reply, 404, "Not Found"));

  // While draining (SIGTERM), answers close their connection: a keep-alive client must not hold shutdown open
  // once its in-flight request is answered.
  let draining = false;
  app.addHook("preClose", async () => {
    draining = true;
  });
  // A callback hook, not an async one: most responses need nothing here, and they should not pay for a promise.
  app.addHook("onSend", (request, reply, payload, done) => {
    if (draining) reply.header("connection", "close");
    timeouts.answering(request.raw.socket);
    done(null, payload);
  });
  // Routes whose answer may take long (inference, model loads): the client owes nothing while they work.
  const working = (request: FastifyRequest, _reply: FastifyReply, done: () => void): void => {
    timeouts.working(request.raw.socket);
    done();
  };

  type Handler = (request: FastifyRequest, reply: FastifyReply) => unknown;
  type Method = "GET" | "POST";
  const routes: { methods: Method[]; url: string; group: ApiGroup; handler: Handler }[] = [];
  const route = (methods: Method | Method[], url: string, group: ApiGroup, handler: Handler): void => {
    routes.push({ methods: Array.isArray(methods) ? methods : [methods], url, group, handler });
  };
  const both = (suffix: string, methods: Method | Method[], group: ApiGroup, handler: (request: FastifyRequest<{ Params: ModelParams }>, reply: FastifyReply) => unknown): void => {
    route(methods, `/v2/models/:model${suffix}`, group, handler as never);
    route(methods, `/v2/models/:model/versions/:version${suffix}`, group, handler as never);
  };

  // Triton answers health with an empty body: 200 when true, 400 when not (503 while shutting down).
  route("GET", "/v2/health/live", "health", (_request, reply) => reply.code(core.isLive() ? 200 : 400).send());
  route("GET", "/v2/health/ready", "health", (_request, reply) => reply.code(core.isReady() ? 200 : core.isLive() ? 400 : 503).send());
  route("GET", "/v2", "metadata", () => core.serverMetadata());
  route("GET", "/v2/models/stats", "statistics", () => ({ model_stats: core.statistics() }));

  both("", "GET", "metadata", (request) => core.modelMetadata(request.params.model, versionOf(request.params)));
  both("/ready", "GET", "health", (request, reply) =>
    core.modelReady(request.params.model, versionOf(request.params)) ? reply.code(200).send() : sendError(reply, 400, "Model version not ready"));
  both("/config", "GET", "model-config", (request) => core.modelConfig(request.params.model, versionOf(request.params)));
  both("/stats", "GET", "statistics", (request) => ({ model_stats: core.statistics(request.params.model, versionOf(request.params) ?? "") }));
  both("/infer", "POST", "inference", async (request, reply) => {
    const trace = tracer.sample(request.params.model);
    if (trace !== undefined) traceHttpExchange(trace, reply);
    const modelVersion = versionOf(request.params);
    core.checkModelAvailable(request.params.model, modelVersion);
    // No body at all (no Content-Type, no length) is an empty one, as with a Content-Type: Triton answers 400.
    const body = await decodeRequestBody((request.body as Buffer | undefined) ?? Buffer.alloc(0), request.headers["content-encoding"], options.maxInputBytes);
    const { request: inferRequest, encoding, sharedMemory: tensorsInSharedMemory } = await decoder.decode(body, headerLengthOf(request), {
      modelName: request.params.model, modelVersion, metadata: () => core.modelMetadata(request.params.model, modelVersion),
    });
    const signal = clientGone(reply);
    const { response, placed } = await inferWithSharedMemory(sharedMemory, tensorsInSharedMemory, inferRequest, (ready) => core.infer({ ...ready, signal, trace }));
    trace?.timestamp("HTTP_SEND_START", process.hrtime.bigint());
    return sendInferResponse(reply, await encodeInferResponse(response, encoding, placed), chooseResponseEncoding(request.headers["accept-encoding"]));
  });

  const objectBody = async (request: FastifyRequest): Promise<Record<string, unknown>> =>
    parseRepositoryBody(await decodeRequestBody((request.body as Buffer | undefined) ?? Buffer.alloc(0), request.headers["content-encoding"], options.maxInputBytes));
  route("POST", "/v2/repository/index", "model-repository", async (request) => {
    const ready = (await objectBody(request))["ready"];
    if (ready !== undefined && typeof ready !== "boolean") throw new InferenceError("INVALID_ARG", "'ready' must be a boolean");
    return core.repositoryIndex(ready ?? false);
  });
  route("POST", "/v2/repository/models/:model/load", "model-repository", async (request, reply) => {
    await core.loadModel((request.params as ModelParams).model, loadOverridesOf(await objectBody(request)));
    return reply.code(200).send();
  });
  route("POST", "/v2/repository/models/:model/unload", "model-repository", async (request, reply) => {
    await core.unloadModel((request.params as ModelParams).model, unloadDependentsOf(await objectBody(request)));
    return reply.code(200).send();
  });
  // Triton's routes name a repository optionally, and refuse any name: there is one namespace.
  const namedRepository = (request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    refuseRepositoryName((request.params as { repository: string }).repository);
    return sendError(reply, 404, "Not Found"); // an empty name: a path Triton does not route either
  };
  route("POST", "/v2/repository/:repository/index", "model-repository", namedRepository);
  route("POST", "/v2/repository/:repository/models/:model/load", "model-repository", namedRepository);
  route("POST", "/v2/repository/:repository/models/:model/unload", "model-repository", namedRepository);

  const regionOf = (request: FastifyRequest): string => (request.params as { region: string }).region;
  route("GET", "/v2/systemsharedmemory/status", "shared-memory", () => sharedMemory.status());
  route("GET", "/v2/systemsharedmemory/region/:region/status", "shared-memory", (request) => sharedMemory.status(regionOf(request)));
  route("POST", "/v2/systemsharedmemory/region/:region/register", "shared-memory", async (request, reply) => {
    const { key, offset, byteSize } = sharedMemoryRegistration(await objectBody(request));
    await sharedMemory.register(regionOf(request), key, offset, byteSize);
    return reply.code(200).send();
  });
  route("POST", "/v2/systemsharedmemory/region/:region/unregister", "shared-memory", async (request, reply) => {
    await sharedMemory.unregister(regionOf(request));
    return reply.code(200).send();
  });
  route("POST", "/v2/systemsharedmemory/unregister", "shared-memory", async (_request, reply) => {
    await sharedMemory.unregister();
    return reply.code(200).send();
  });
  // CUDA shared memory is not implemented: Triton's paths, so its API group can be restricted as in Triton.
  const unsupported = (): never => {
    throw new InferenceError("UNSUPPORTED", "the CUDA shared memory extension is not supported by this server");
  };
  route("GET", "/v2/cudasharedmemory/status", "shared-memory", unsupported);
  route("GET", "/v2/cudasharedmemory/region/:region/status", "shared-memory", unsupported);
  route("POST", "/v2/cudasharedmemory/region/:region/register", "shared-memory", unsupported);
  route("POST", "/v2/cudasharedmemory/region/:region/unregister", "shared-memory", unsupported);
  route("POST", "/v2/cudasharedmemory/unregister", "shared-memory", unsupported);
  const traceSetting = async (request: FastifyRequest, model: string | undefined): Promise<Record<string, string | string[]>> =>
    answerTraceSetting(tracer, core, model, request.method === "POST" ? traceSettingRequestOf(await objectBody(request)) : undefined);
  route(["GET", "POST"], "/v2/trace/setting", "trace", (request) => traceSetting(request, undefined));
  both("/trace/setting", ["GET", "POST"], "trace", (request) => {
    versionOf(request.params);
    return traceSetting(request, request.params.model);
  });
  route(["GET", "POST"], "/v2/logging", "logging", async (request) => {
    if (request.method === "GET") return logSettings.current();
    const update = await objectBody(request);
    try {
      return logSettings.update(update);
    } catch (error) {
      // Triton answers every refused logging update 400, a new log file's UNSUPPORTED included.
      if (error instanceof InferenceError && error.code === "UNSUPPORTED") throw new InferenceError("INVALID_ARG", error.message);
      throw error;
    }
  });

  // Triton checks a restricted group's header first (before the verb, as in http_server.cc); model load/unload
  // then refuse what a page on another site could send.
  const restricted = new Map<ApiGroup, onRequestHookHandler>();
  for (const [group, restriction] of options.restrictions) {
    const message = `This API is restricted, expecting header '${restriction.header}'`;
    const unlocks = unlocker(restriction);
    restricted.set(group, (request, reply, done) => {
      const value = request.headers[restriction.header];
      if (unlocks(Array.isArray(value) ? value[0] : value)) done();
      else void sendError(reply, 403, message);
    });
  }
  const stateChanging = new Set(["/v2/repository/models/:model/load", "/v2/repository/models/:model/unload"]);
  const refuseCrossSite: onRequestHookHandler = (request, reply, done) => {
    const refusal = crossSiteRefusal(request.headers);
    if (refusal === undefined) done();
    else void sendError(reply, refusal.status, refusal.message);
  };
  const slow = new Set<ApiGroup>(["inference", "model-repository"]);
  const onRequestOf = (group: ApiGroup, url: string): onRequestHookHandler[] =>
    [restricted.get(group), stateChanging.has(url) ? refuseCrossSite : undefined].filter((hook) => hook !== undefined);
  for (const { methods, url, group, handler } of routes) {
    app.route({ method: methods, url, handler, onRequest: onRequestOf(group, url), ...(slow.has(group) ? { preHandler: working } : {}) });
  }
  // A known path with the wrong verb is 405, as in Triton; so is a CORS preflight (OPTIONS), which carries no
  // Access-Control-* headers back, so browsers never send the cross-origin request it asked about.
  for (const { methods, url, group } of routes) {
    const others = (["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"] as const).filter((m) => !methods.includes(m as Method));
    app.route({ method: [...others], url, onRequest: restricted.has(group) ? [restricted.get(group)!] : [], handler: (_request, reply) => sendError(reply, 405, "Method Not Allowed") });
  }
  return app;
}

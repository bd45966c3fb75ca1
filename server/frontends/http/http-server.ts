import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import type { Logger } from "pino";
import { Cancellation, InferenceError, type InferenceCore } from "../../core/index";
import { chooseResponseEncoding, decodeRequestBody, encodeResponseBody } from "./content-encoding";
import { httpStatusOf } from "./http-status";
import { decodeInferRequest } from "./infer-request-codec";
import { encodeInferResponse } from "./infer-response-codec";

export interface HttpServerOptions {
  /** Triton's --http-max-input-size: largest request body, before and after decompression. */
  readonly maxInputBytes: number;
  readonly logger: Logger;
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
 * The KServe v2 REST frontend (Triton's HTTP endpoint): health, metadata, config, statistics, repository and
 * infer routes, binary tensor data, gzip/deflate both ways, and Triton's `{"error": "..."}` shape and status
 * codes for every failure, fastify's own included.
 */
export function buildHttpServer(core: InferenceCore, options: HttpServerOptions): FastifyInstance {
  const app = Fastify({
    loggerInstance: options.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.maxInputBytes,
    // Inference bodies can be large; 'Expect: 100-continue' clients get their continue from Node.
    return503OnClosing: true,
  });

  // Every body is read as bytes: infer bodies mix a JSON header with binary tensors.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: options.maxInputBytes }, (_request, body, done) => done(null, body));

  app.setErrorHandler((error: Error & { statusCode?: number; code?: string }, request, reply) => {
    if (error instanceof InferenceError) {
      const status = httpStatusOf(error.code);
      if (status >= 500) request.log.error({ err: error }, "request failed");
      return sendError(reply, status, error.message);
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
    const encoding = chooseResponseEncoding(request.headers["accept-encoding"]);
    if (encoding === undefined || (typeof payload !== "string" && !Buffer.isBuffer(payload))) return done(null, payload);
    const bytes = typeof payload === "string" ? Buffer.from(payload) : payload;
    if (bytes.byteLength === 0) return done(null, payload);
    reply.header("content-encoding", encoding);
    encodeResponseBody(bytes, encoding).then((encoded) => done(null, encoded), (error: Error) => done(error));
  });

  const routes: { method: "GET" | "POST"; url: string; handler: (request: FastifyRequest, reply: FastifyReply) => unknown }[] = [];
  const route = (method: "GET" | "POST", url: string, handler: (request: FastifyRequest, reply: FastifyReply) => unknown): void => {
    routes.push({ method, url, handler });
  };
  const both = (suffix: string, method: "GET" | "POST", handler: (request: FastifyRequest<{ Params: ModelParams }>, reply: FastifyReply) => unknown): void => {
    route(method, `/v2/models/:model${suffix}`, handler as never);
    route(method, `/v2/models/:model/versions/:version${suffix}`, handler as never);
  };

  // Triton answers health with an empty body: 200 when true, 400 when not (503 while shutting down).
  route("GET", "/v2/health/live", (_request, reply) => reply.code(core.isLive() ? 200 : 400).send());
  route("GET", "/v2/health/ready", (_request, reply) => reply.code(core.isReady() ? 200 : core.isLive() ? 400 : 503).send());
  route("GET", "/v2", () => core.serverMetadata());
  route("GET", "/v2/models/stats", () => ({ model_stats: core.statistics() }));

  both("", "GET", (request) => core.modelMetadata(request.params.model, versionOf(request.params)));
  both("/ready", "GET", (request, reply) =>
    core.modelReady(request.params.model, versionOf(request.params)) ? reply.code(200).send() : sendError(reply, 400, "Model version not ready"));
  both("/config", "GET", (request) => core.modelConfig(request.params.model, versionOf(request.params)));
  both("/stats", "GET", (request) => ({ model_stats: core.statistics(request.params.model, versionOf(request.params) ?? "") }));
  both("/infer", "POST", async (request, reply) => {
    const modelVersion = versionOf(request.params);
    core.checkModelAvailable(request.params.model, modelVersion);
    const body = await decodeRequestBody(request.body as Buffer, request.headers["content-encoding"], options.maxInputBytes);
    const { request: inferRequest, encoding } = decodeInferRequest(body, headerLengthOf(request), {
      modelName: request.params.model, modelVersion, metadata: () => core.modelMetadata(request.params.model, modelVersion),
    });
    const response = await core.infer({ ...inferRequest, signal: clientGone(reply) });
    const encoded = encodeInferResponse(response, encoding);
    if (encoded.headerLength === undefined) return reply.type("application/json").send(encoded.body);
    return reply.type("application/octet-stream").header(HEADER_LENGTH, encoded.headerLength).send(encoded.body);
  });

  route("POST", "/v2/repository/index", async (request) => {
    const body = await decodeRequestBody((request.body as Buffer | undefined) ?? Buffer.alloc(0), request.headers["content-encoding"], options.maxInputBytes);
    const parsed = parseOptionalJson(body);
    const ready = parsed["ready"];
    if (ready !== undefined && typeof ready !== "boolean") throw new InferenceError("INVALID_ARG", "'ready' must be a boolean");
    return core.repositoryIndex(ready ?? false);
  });
  route("POST", "/v2/repository/models/:model/load", async (request, reply) => {
    const params = request.params as ModelParams;
    const parsed = parseOptionalJson((request.body as Buffer | undefined) ?? Buffer.alloc(0));
    const overrides = Object.keys((parsed["parameters"] ?? {}) as Record<string, unknown>).filter((k) => k === "config" || k.startsWith("file:"));
    if (overrides.length > 0) {
      throw new InferenceError("UNSUPPORTED", `load overrides (${overrides.join(", ")}) are not supported: load reads the model directory as it is`);
    }
    await core.loadModel(params.model);
    return reply.code(200).send();
  });
  route("POST", "/v2/repository/models/:model/unload", async (request, reply) => {
    const params = request.params as ModelParams;
    parseOptionalJson((request.body as Buffer | undefined) ?? Buffer.alloc(0));
    await core.unloadModel(params.model);
    return reply.code(200).send();
  });

  for (const { method, url, handler } of routes) app.route({ method, url, handler });
  // A known path with the wrong verb is 405, as in Triton.
  const known = new Map<string, Set<string>>();
  for (const { method, url } of routes) known.set(url, (known.get(url) ?? new Set()).add(method));
  for (const [url, methods] of known) {
    const others = (["GET", "POST", "PUT", "DELETE", "PATCH"] as const).filter((m) => !methods.has(m));
    app.route({ method: [...others], url, handler: (_request, reply) => sendError(reply, 405, "Method Not Allowed") });
  }
  return app;
}

function parseOptionalJson(body: Buffer): Record<string, unknown> {
  if (body.byteLength === 0) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString("utf8"));
  } catch (error) {
    throw new InferenceError("INVALID_ARG", `failed to parse the request JSON buffer: ${(error as Error).message}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new InferenceError("INVALID_ARG", "the request body must be a JSON object");
  return parsed as Record<string, unknown>;
}

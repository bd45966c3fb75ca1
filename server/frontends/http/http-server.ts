import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import type { Logger } from "pino";
import { Cancellation, InferenceError, type InferenceCore, refuseRepositoryName } from "../../core/index";
import { chooseResponseEncoding, decodeRequestBody, encodeResponseBody } from "./content-encoding";
import { crossSiteRefusal } from "./cross-site-guard";
import { httpStatusOf } from "./http-status";
import { decodeInferRequest } from "./infer-request-codec";
import { encodeInferResponse } from "./infer-response-codec";
import { loadOverridesOf, parseRepositoryBody, unloadDependentsOf } from "./repository-requests";

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
 * infer routes, binary tensor data, gzip/deflate request bodies and (as Triton) compressed inference responses,
 * and Triton's `{"error": "..."}` shape and status codes for every failure, fastify's own included. It sends no
 * CORS headers, and refuses model load/unload requests a page on another site could make.
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
  app.addHook("onSend", (_request, reply, payload, done) => {
    if (draining) reply.header("connection", "close");
    done(null, payload);
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
    // As Triton, only a successful inference response is compressed: clients that ask for compression and
    // then do not decompress (aiohttp, as tritonclient.http.aio sets it up) read every other answer as it is.
    const contentEncoding = chooseResponseEncoding(request.headers["accept-encoding"]);
    if (contentEncoding !== undefined) reply.header("content-encoding", contentEncoding);
    const payload = contentEncoding === undefined ? encoded.body : await encodeResponseBody(encoded.body, contentEncoding);
    if (encoded.headerLength === undefined) return reply.type("application/json").send(payload);
    return reply.type("application/octet-stream").header(HEADER_LENGTH, encoded.headerLength).send(payload);
  });

  const repositoryBody = async (request: FastifyRequest): Promise<Record<string, unknown>> =>
    parseRepositoryBody(await decodeRequestBody((request.body as Buffer | undefined) ?? Buffer.alloc(0), request.headers["content-encoding"], options.maxInputBytes));
  route("POST", "/v2/repository/index", async (request) => {
    const ready = (await repositoryBody(request))["ready"];
    if (ready !== undefined && typeof ready !== "boolean") throw new InferenceError("INVALID_ARG", "'ready' must be a boolean");
    return core.repositoryIndex(ready ?? false);
  });
  route("POST", "/v2/repository/models/:model/load", async (request, reply) => {
    await core.loadModel((request.params as ModelParams).model, loadOverridesOf(await repositoryBody(request)));
    return reply.code(200).send();
  });
  route("POST", "/v2/repository/models/:model/unload", async (request, reply) => {
    await core.unloadModel((request.params as ModelParams).model, unloadDependentsOf(await repositoryBody(request)));
    return reply.code(200).send();
  });
  // Triton's routes name a repository optionally, and refuse any name: there is one namespace.
  const namedRepository = (request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    refuseRepositoryName((request.params as { repository: string }).repository);
    return sendError(reply, 404, "Not Found"); // an empty name: a path Triton does not route either
  };
  route("POST", "/v2/repository/:repository/index", namedRepository);
  route("POST", "/v2/repository/:repository/models/:model/load", namedRepository);
  route("POST", "/v2/repository/:repository/models/:model/unload", namedRepository);

  // Model load/unload change the server: a request a page on another site could send is refused first.
  const stateChanging = new Set(["/v2/repository/models/:model/load", "/v2/repository/models/:model/unload"]);
  const refuseCrossSite = (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    const refusal = crossSiteRefusal(request.headers);
    if (refusal === undefined) done();
    else void sendError(reply, refusal.status, refusal.message);
  };
  for (const { method, url, handler } of routes) {
    app.route({ method, url, handler, ...(stateChanging.has(url) ? { onRequest: refuseCrossSite } : {}) });
  }
  // A known path with the wrong verb is 405, as in Triton; so is a CORS preflight (OPTIONS), which carries no
  // Access-Control-* headers back, so browsers never send the cross-origin request it asked about.
  const known = new Map<string, Set<string>>();
  for (const { method, url } of routes) known.set(url, (known.get(url) ?? new Set()).add(method));
  for (const [url, methods] of known) {
    const others = (["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"] as const).filter((m) => !methods.has(m));
    app.route({ method: [...others], url, handler: (_request, reply) => sendError(reply, 405, "Method Not Allowed") });
  }
  return app;
}

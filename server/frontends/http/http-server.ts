import type { FastifyInstance, preHandlerHookHandler } from "fastify";
import type { InferenceCore } from "../../core/index";
import type { Tracer } from "../../tracing/index";
import type { ApiRestrictions } from "../api-restrictions";
import type { RequestBytesBudget } from "../request-bytes-budget";
import type { SystemSharedMemory } from "../shared-memory/system-shared-memory";
import { bodyReader } from "./body-reader";
import { ConnectionTimeouts } from "./connection-timeouts";
import { CrossSiteGuard } from "./cross-site-guard";
import { replyWithError, sendError } from "./error-reply";
import { createFastify, type HttpListenerOptions } from "./fastify-server";
import { refuseOtherMethods } from "./method-not-allowed";
import { requestBudgetHook } from "./request-budget-hook";
import { healthRoutes } from "./routes/health-routes";
import { generateRoutes } from "./routes/generate-routes";
import { inferRoutes } from "./routes/infer-routes";
import { loggingRoutes } from "./routes/logging-routes";
import { metadataRoutes } from "./routes/metadata-routes";
import { modelConfigRoutes } from "./routes/model-config-routes";
import { repositoryRoutes } from "./routes/repository-routes";
import type { RouteGroupOptions } from "./routes/route-group-options";
import { InferRequestDecoder } from "./json-request-decoder";
import { sharedMemoryRoutes } from "./routes/shared-memory-routes";
import { statisticsRoutes } from "./routes/statistics-routes";
import { traceRoutes } from "./routes/trace-routes";

export type { HttpConnectionLimits } from "./fastify-server";

export interface HttpServerOptions extends HttpListenerOptions {
  /** Triton's --http-restricted-api. */
  readonly restrictions: ApiRestrictions;
  /** Samples inference requests for Triton's trace extension and owns its settings. */
  readonly tracer: Tracer;
  /** The system shared memory regions, shared with the gRPC frontend. */
  readonly sharedMemory: SystemSharedMemory;
  /** Host names (besides IP literals and localhost) under which clients may change the server (--http-allowed-host). */
  readonly allowedHosts: readonly string[];
  /** Bytes of requests in flight, shared with the gRPC frontend (--max-inflight-request-bytes). */
  readonly requestBudget: RequestBytesBudget;
}

const FASTIFY_JSON_TYPE = "application/json; charset=utf-8";

declare module "fastify" {
  interface FastifyInstance {
    /** Closes every connection but those whose request the server still works on (a shutdown past its deadline). */
    closeAllButWorking(): void;
  }
}

/** One plugin per Triton API group (its --http-restricted-api unit), each with the hooks only it needs. */
const ROUTE_GROUPS = [
  healthRoutes, metadataRoutes, modelConfigRoutes, statisticsRoutes, inferRoutes, generateRoutes, repositoryRoutes, sharedMemoryRoutes, traceRoutes, loggingRoutes,
];

/**
 * The KServe v2 REST frontend (Triton's HTTP endpoint): health, metadata, config, statistics, repository and
 * infer routes, binary tensor data, gzip/deflate request bodies and (as Triton) compressed inference responses,
 * and Triton's `{"error": "..."}` shape and status codes for every failure, fastify's own included. It sends no
 * CORS headers, and refuses the requests that change the server (repository, logging, trace settings, shared
 * memory, and inference into shared memory) when a page on another site could have made them.
 */
export function buildHttpServer(core: InferenceCore, options: HttpServerOptions): FastifyInstance {
  const app = createFastify(options);
  const timeouts = new ConnectionTimeouts(app.server, options.limits.idleTimeoutMs, options.limits.writeTimeoutMs);

  // Every body is read as bytes: infer bodies mix a JSON header with binary tensors.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { bodyLimit: options.maxInputBytes }, bodyReader(options.maxInputBytes));
  app.setErrorHandler(replyWithError);
  app.setNotFoundHandler((_request, reply) => sendError(reply, 404, "Not Found"));
  app.addHook("onRoute", refuseOtherMethods);
  app.addHook("onRequest", requestBudgetHook(options.requestBudget));

  // While draining (SIGTERM), answers close their connection: a keep-alive client must not hold shutdown open
  // once its in-flight request is answered.
  let draining = false;
  app.addHook("preClose", async () => {
    draining = true;
  });
  // A callback hook, not an async one: most responses need nothing here, and they should not pay for a promise.
  app.addHook("onSend", (request, reply, payload, done) => {
    if (draining) reply.header("connection", "close");
    // Fastify appends a charset to every JSON type it sends; Triton's JSON answers are `application/json` exactly,
    // and its clients' tests compare the header whole (qa/L0_http/generate_endpoint_test.py).
    if (reply.getHeader("content-type") === FASTIFY_JSON_TYPE) reply.header("content-type", "application/json");
    timeouts.answering(request.raw.socket);
    done(null, payload);
  });
  const working: preHandlerHookHandler = (request, _reply, done) => {
    timeouts.working(request.raw.socket);
    done();
  };

  const decoder = new InferRequestDecoder();
  app.addHook("onClose", async () => decoder.close());
  const groupOptions: RouteGroupOptions = {
    core, restrictions: options.restrictions, maxInputBytes: options.maxInputBytes, working,
    tracer: options.tracer, logSettings: options.logSettings, sharedMemory: options.sharedMemory,
    crossSite: new CrossSiteGuard(options.allowedHosts), decoder,
  };
  for (const routes of ROUTE_GROUPS) app.register(routes, groupOptions);
  app.decorate("closeAllButWorking", () => timeouts.closeAllButWorking());
  return app;
}

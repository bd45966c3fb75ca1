import type { FastifyPluginCallback } from "fastify";
import { sendError } from "../error-reply";
import { type ModelParams, modelUrls, versionOf } from "./model-url";
import { restrictApiGroup } from "./restrict-api-group";
import type { RouteGroupOptions } from "./route-group-options";

/** Triton's health group: server liveness and readiness, and a model's readiness. */
export const healthRoutes: FastifyPluginCallback<RouteGroupOptions> = (scope, { core, restrictions }, done) => {
  restrictApiGroup(scope, "health", restrictions);
  // Triton answers health with an empty body: 200 when true, 400 when not (503 while shutting down).
  scope.get("/v2/health/live", (_request, reply) => reply.code(core.isLive() ? 200 : 400).send());
  scope.get("/v2/health/ready", (_request, reply) => reply.code(core.isReady() ? 200 : core.shuttingDown ? 503 : 400).send());
  for (const url of modelUrls("/ready")) {
    scope.get<{ Params: ModelParams }>(url, (request, reply) =>
      core.modelReady(request.params.model, versionOf(request.params)) ? reply.code(200).send() : sendError(reply, 400, "Model version not ready"));
  }
  done();
};

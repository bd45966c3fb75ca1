import type { FastifyPluginCallback } from "fastify";
import { type ModelParams, modelUrls, versionOf } from "./model-url";
import { restrictApiGroup } from "./restrict-api-group";
import type { RouteGroupOptions } from "./route-group-options";

/** Triton's model-config group: a model's configuration, as the server completed it. */
export const modelConfigRoutes: FastifyPluginCallback<RouteGroupOptions> = (scope, { core, restrictions }, done) => {
  restrictApiGroup(scope, "model-config", restrictions);
  for (const url of modelUrls("/config")) {
    scope.get<{ Params: ModelParams }>(url, (request) => core.modelConfig(request.params.model, versionOf(request.params)));
  }
  done();
};

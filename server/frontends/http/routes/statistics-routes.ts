import type { FastifyPluginCallback } from "fastify";
import { type ModelParams, modelUrls, versionOf } from "./model-url";
import { restrictApiGroup } from "./restrict-api-group";
import type { RouteGroupOptions } from "./route-group-options";

/** Triton's statistics group: every model's inference statistics, or one model's. */
export const statisticsRoutes: FastifyPluginCallback<RouteGroupOptions> = (scope, { core, restrictions }, done) => {
  restrictApiGroup(scope, "statistics", restrictions);
  scope.get("/v2/models/stats", () => ({ model_stats: core.statistics() }));
  for (const url of modelUrls("/stats")) {
    scope.get<{ Params: ModelParams }>(url, (request) => ({ model_stats: core.statistics(request.params.model, versionOf(request.params) ?? "") }));
  }
  done();
};

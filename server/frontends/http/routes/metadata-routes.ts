import type { FastifyPluginCallback } from "fastify";
import { type ModelParams, modelUrls, versionOf } from "./model-url";
import { restrictApiGroup } from "./restrict-api-group";
import type { RouteGroupOptions } from "./route-group-options";

/** Triton's metadata group: the server's metadata and a model's. */
export const metadataRoutes: FastifyPluginCallback<RouteGroupOptions> = (scope, { core, restrictions }, done) => {
  restrictApiGroup(scope, "metadata", restrictions);
  scope.get("/v2", () => core.serverMetadata());
  for (const url of modelUrls("")) {
    scope.get<{ Params: ModelParams }>(url, (request) => core.modelMetadata(request.params.model, versionOf(request.params)));
  }
  done();
};

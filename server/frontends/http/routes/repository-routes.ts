import type { FastifyPluginCallback } from "fastify";
import { InferenceError, refuseRepositoryName } from "../../../core/index";
import { sendError } from "../error-reply";
import { loadOverridesOf, unloadDependentsOf } from "../repository-requests";
import { objectBody } from "./object-body";
import { restrictApiGroup } from "./restrict-api-group";
import type { RawBody, RouteGroupOptions } from "./route-group-options";

type ModelChange = { Params: { model: string }; Body: RawBody };

/** Triton's model-repository group: the repository index, and explicit model load and unload. */
export const repositoryRoutes: FastifyPluginCallback<RouteGroupOptions> = (scope, { core, restrictions, working, maxInputBytes, crossSite }, done) => {
  restrictApiGroup(scope, "model-repository", restrictions);
  scope.addHook("preHandler", working);
  scope.post<{ Body: RawBody }>("/v2/repository/index", async (request) => {
    const ready = (await objectBody(request, maxInputBytes))["ready"];
    if (ready !== undefined && typeof ready !== "boolean") throw new InferenceError("INVALID_ARG", "Invalid value for 'ready': expected a boolean");
    return core.repositoryIndex(ready ?? false);
  });
  scope.post<ModelChange>("/v2/repository/models/:model/load", { onRequest: crossSite.hook }, async (request, reply) => {
    await core.loadModel(request.params.model, loadOverridesOf(await objectBody(request, maxInputBytes)));
    return reply.code(200).send();
  });
  scope.post<ModelChange>("/v2/repository/models/:model/unload", { onRequest: crossSite.hook }, async (request, reply) => {
    await core.unloadModel(request.params.model, unloadDependentsOf(await objectBody(request, maxInputBytes)));
    return reply.code(200).send();
  });
  // Triton's routes name a repository optionally, and refuse any name: there is one namespace.
  for (const url of ["/v2/repository/:repository/index", "/v2/repository/:repository/models/:model/load", "/v2/repository/:repository/models/:model/unload"]) {
    scope.post<{ Params: { repository: string } }>(url, (request, reply) => {
      refuseRepositoryName(request.params.repository);
      return sendError(reply, 404, "Not Found"); // an empty name: a path Triton does not route either
    });
  }
  done();
};

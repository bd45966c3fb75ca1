import type { FastifyPluginCallback, FastifyRequest } from "fastify";
import { answerTraceSetting, type TraceSettingRequest } from "../../../tracing/index";
import { traceSettingRequestOf } from "../trace-setting-body";
import { type ModelParams, modelUrls, versionOf } from "./model-url";
import { objectBody } from "./object-body";
import { restrictApiGroup } from "./restrict-api-group";
import type { RawBody, RouteGroupOptions } from "./route-group-options";

/** Triton's trace group: the trace settings, the server's and a model's; GET reads them, POST changes them. */
export const traceRoutes: FastifyPluginCallback<RouteGroupOptions> = (scope, { core, tracer, restrictions, maxInputBytes, crossSite }, done) => {
  restrictApiGroup(scope, "trace", restrictions);
  const updateOf = async (request: FastifyRequest<{ Body: RawBody }>): Promise<TraceSettingRequest | undefined> =>
    request.method === "POST" ? traceSettingRequestOf(await objectBody(request, maxInputBytes)) : undefined;
  scope.route<{ Body: RawBody }>({
    method: ["GET", "POST"], url: "/v2/trace/setting",
    onRequest: crossSite.hook,
    handler: async (request) => answerTraceSetting(tracer, core, undefined, await updateOf(request)),
  });
  for (const url of modelUrls("/trace/setting")) {
    scope.route<{ Params: ModelParams; Body: RawBody }>({
      method: ["GET", "POST"], url,
      onRequest: crossSite.hook,
      handler: async (request) => {
        versionOf(request.params);
        return answerTraceSetting(tracer, core, request.params.model, await updateOf(request));
      },
    });
  }
  done();
};

import type { FastifyPluginCallback } from "fastify";
import { InferenceError } from "../../../core/index";
import { objectBody } from "./object-body";
import { restrictApiGroup } from "./restrict-api-group";
import type { RawBody, RouteGroupOptions } from "./route-group-options";

/** Triton's logging group: GET reads the log settings, POST changes them. */
export const loggingRoutes: FastifyPluginCallback<RouteGroupOptions> = (scope, { logSettings, restrictions, maxInputBytes, crossSite }, done) => {
  restrictApiGroup(scope, "logging", restrictions);
  scope.route<{ Body: RawBody }>({
    method: ["GET", "POST"], url: "/v2/logging",
    onRequest: crossSite.hook,
    handler: async (request) => {
      if (request.method === "GET") return logSettings.current();
      const update = await objectBody(request, maxInputBytes);
      try {
        return logSettings.update(update);
      } catch (error) {
        // Triton answers every refused logging update 400, a new log file's UNSUPPORTED included.
        if (error instanceof InferenceError && error.code === "UNSUPPORTED") throw new InferenceError("INVALID_ARG", error.message);
        throw error;
      }
    },
  });
  done();
};

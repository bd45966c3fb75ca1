import type { FastifyInstance } from "fastify";
import { type ApiGroup, type ApiRestrictions, unlocker } from "../../api-restrictions";
import { sendError } from "../error-reply";

/**
 * Triton's --http-restricted-api for one group's plugin: its requests without the group's header (and value) are
 * refused 403, checked first, before the verb (as in http_server.cc) or the body.
 */
export function restrictApiGroup(scope: FastifyInstance, group: ApiGroup, restrictions: ApiRestrictions): void {
  const restriction = restrictions.get(group);
  if (restriction === undefined) return;
  const message = `This API is restricted, expecting header '${restriction.header}'`;
  const unlocks = unlocker(restriction);
  scope.addHook("onRequest", (request, reply, done) => {
    const value = request.headers[restriction.header];
    if (unlocks(Array.isArray(value) ? value[0] : value)) done();
    else void sendError(reply, 403, message);
  });
}

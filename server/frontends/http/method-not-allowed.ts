import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods, RouteOptions } from "fastify";
import { sendError } from "./error-reply";

const METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"] as const satisfies readonly HTTPMethods[];

function refuseMethod(_request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendError(reply, 405, "Method Not Allowed");
}

/**
 * An onRoute hook: a known path answers its other verbs 405, as in Triton; so does a CORS preflight (OPTIONS),
 * which carries no Access-Control-* headers back, so browsers never send the cross-origin request it asked about.
 * The 405 route joins its route's plugin, so that group's hooks check it (a restricted API answers 403 before
 * 405) while the route's own hooks do not. Each path is routed once, all its verbs together.
 */
export function refuseOtherMethods(this: FastifyInstance, route: RouteOptions): void {
  // fastify's HEAD twin of a GET route, and the 405 routes added here, are not paths of their own.
  if (route.handler === refuseMethod || route.method === "HEAD") return;
  const served: readonly HTTPMethods[] = Array.isArray(route.method) ? route.method : [route.method];
  this.route({ method: METHODS.filter((method) => !served.includes(method)), url: route.url, handler: refuseMethod });
}

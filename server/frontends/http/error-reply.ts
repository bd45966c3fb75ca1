import type { FastifyReply, FastifyRequest } from "fastify";
import { InferenceError } from "../../core/index";
import { httpStatusOf } from "./http-status";

/** Answers with Triton's error shape, `{"error": "..."}`. */
export function sendError(reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply.code(status).type("application/json").send(JSON.stringify({ error: message }));
}

/**
 * The error handler: the core's errors with their Triton status, fastify's own (a bad Content-Length, a bad media
 * type) with theirs, anything else a 500 that says no more than "internal server error".
 */
export function replyWithError(error: Error & { statusCode?: number; code?: string }, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof InferenceError) {
    // Refusals (unsupported, unavailable, overloaded) are answers, not server faults: logged only when verbose.
    if (error.code === "INTERNAL") request.log.error({ err: error }, "request failed");
    else request.log.debug({ code: error.code, reason: error.message }, "request refused");
    return sendError(reply, httpStatusOf(error.code), error.message);
  }
  const status = error.statusCode !== undefined && error.statusCode >= 400 ? error.statusCode : 500;
  if (status >= 500) request.log.error({ err: error }, "request failed");
  return sendError(reply, status, status >= 500 ? "internal server error" : error.message);
}

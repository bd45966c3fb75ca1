import type { FastifyReply, FastifyRequest } from "fastify";
import { InferenceError } from "../../core/index";
import { httpStatusOf } from "./http-status";

/** Answers with Triton's error shape, `{"error": "..."}`. */
export function sendError(reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply.code(status).type("application/json").send(JSON.stringify({ error: message }));
}

/**
 * Triton's refusal of a body over --http-max-input-size (src/http_server.cc): 400, in EVBufferToJson's words, or
 * for a raw binary body (Inference-Header-Content-Length: 0) in its raw input's. A body refused before its end
 * without a Content-Length is "more than" the limit: its size is never known.
 */
function tooLarge(request: FastifyRequest, maxInputBytes: number): string {
  const declared = request.headers["content-length"];
  const size = declared !== undefined && /^[0-9]+$/.test(declared) ? declared : `more than ${maxInputBytes}`;
  const advice = "Use --http-max-input-size to increase the limit.";
  return request.headers["inference-header-content-length"] === "0"
    ? `Raw input has a byte_size (${size} bytes) that exceeds the maximum allowed value of ${maxInputBytes} bytes. ${advice}`
    : `request JSON size of ${size} bytes exceeds the maximum allowed input size of ${maxInputBytes} bytes. ${advice}`;
}

/**
 * The error handler: the core's errors with their Triton status, fastify's own (a body too large, a bad media
 * type) with theirs, anything else a 500 that says no more than "internal server error".
 */
export function errorReplier(maxInputBytes: number) {
  return (error: Error & { statusCode?: number; code?: string }, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    if (error instanceof InferenceError) {
      // Refusals (unsupported, unavailable, overloaded) are answers, not server faults: logged only when verbose.
      if (error.code === "INTERNAL") request.log.error({ err: error }, "request failed");
      else request.log.debug({ code: error.code, reason: error.message }, "request refused");
      return sendError(reply, httpStatusOf(error.code), error.message);
    }
    const status = error.statusCode !== undefined && error.statusCode >= 400 ? error.statusCode : 500;
    if (error.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
      return sendError(reply, 400, tooLarge(request, maxInputBytes));
    }
    if (status >= 500) request.log.error({ err: error }, "request failed");
    return sendError(reply, status, status >= 500 ? "internal server error" : error.message);
  };
}

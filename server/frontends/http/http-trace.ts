import type { FastifyReply } from "fastify";
import type { RequestTrace } from "../../tracing/index";

/**
 * Records a sampled HTTP request's Triton timestamps around the core's: HTTP_RECV_START when fastify routed the
 * request (its headers were in), HTTP_RECV_END now (the body is read), and HTTP_SEND_END once the response is
 * written; the trace ends when the response closes, however it went.
 */
export function traceHttpExchange(trace: RequestTrace, reply: FastifyReply): void {
  const nowNs = process.hrtime.bigint();
  // fastify times every request from its routing on its own clock (performance.now(), ms): no hook needed.
  trace.timestamp("HTTP_RECV_START", nowNs - BigInt(Math.round(reply.elapsedTime * 1e6)));
  trace.timestamp("HTTP_RECV_END", nowNs);
  reply.raw.once("close", () => {
    if (reply.raw.writableFinished) trace.timestamp("HTTP_SEND_END", process.hrtime.bigint());
    trace.end();
  });
}

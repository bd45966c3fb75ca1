import type { IncomingMessage } from "node:http";
import type { FastifyRequest, onRequestHookHandler } from "fastify";
import type { BudgetLease, RequestBytesBudget } from "../request-bytes-budget";

const leases = new WeakMap<IncomingMessage, BudgetLease>();

/**
 * Holds each request with a body against the server-wide budget from its headers on: its announced length before
 * the body is read (refused 503 at once when the budget cannot hold it), given back when the response is done or
 * the client goes. Routes that decode the body hold more with {@link budgetLeaseOf}.
 */
export function requestBudgetHook(budget: RequestBytesBudget): onRequestHookHandler {
  return (request, reply, done) => {
    const length = request.headers["content-length"];
    if (length === undefined && request.headers["transfer-encoding"] === undefined) {
      done();
      return;
    }
    const lease = budget.lease();
    leases.set(request.raw, lease);
    reply.raw.once("close", () => lease.release());
    try {
      lease.holdAtLeast(Number(length ?? 0) || 0);
    } catch (error) {
      done(error as Error);
      return;
    }
    done();
  };
}

/** The request's lease, when it has a body. */
export function budgetLeaseOf(request: FastifyRequest): BudgetLease | undefined {
  return leases.get(request.raw);
}

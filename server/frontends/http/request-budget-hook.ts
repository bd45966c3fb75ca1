import type { IncomingMessage } from "node:http";
import type { FastifyRequest, onRequestHookHandler } from "fastify";
import type { BudgetLease, RequestBytesBudget } from "../request-bytes-budget";

const leases = new WeakMap<IncomingMessage, BudgetLease>();

/**
 * Gives each request with a body a lease on the server-wide budget, given back when the response is done or the
 * client goes. Nothing is held from the headers: the body reader holds its bytes as they arrive (an announced
 * length reserved up front let a few clients that announce much and send nothing refuse everyone else), and the
 * routes that decompress or decode the body hold more, all with {@link budgetLeaseOf}.
 */
export function requestBudgetHook(budget: RequestBytesBudget): onRequestHookHandler {
  return (request, reply, done) => {
    if (request.headers["content-length"] !== undefined || request.headers["transfer-encoding"] !== undefined) {
      const lease = budget.lease();
      leases.set(request.raw, lease);
      reply.raw.once("close", () => lease.release());
    }
    done();
  };
}

/** The request's lease, when it has a body. */
export function budgetLeaseOf(request: FastifyRequest): BudgetLease | undefined {
  return leases.get(request.raw);
}

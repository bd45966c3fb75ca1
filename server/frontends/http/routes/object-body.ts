import type { FastifyRequest } from "fastify";
import { decodeRequestBody } from "../content-encoding";
import { budgetLeaseOf } from "../request-budget-hook";
import { parseRepositoryBody } from "../repository-requests";
import type { RawBody } from "./route-group-options";

/** The JSON object a repository, shared memory, trace or logging request carries; no body is an empty object. */
export async function objectBody(request: FastifyRequest<{ Body: RawBody }>, maxInputBytes: number): Promise<Record<string, unknown>> {
  return parseRepositoryBody(await decodeRequestBody(request.body, request.headers["content-encoding"], maxInputBytes, budgetLeaseOf(request)));
}

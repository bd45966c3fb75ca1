import type { IncomingHttpHeaders } from "node:http";
import { decodeRequestBody } from "../content-encoding";
import { parseRepositoryBody } from "../repository-requests";
import type { RawBody } from "./route-group-options";

/** The JSON object a repository, shared memory, trace or logging request carries; no body is an empty object. */
export async function objectBody(request: { readonly body: RawBody; readonly headers: IncomingHttpHeaders }, maxInputBytes: number): Promise<Record<string, unknown>> {
  return parseRepositoryBody(await decodeRequestBody(request.body, request.headers["content-encoding"], maxInputBytes));
}

import type { IncomingHttpHeaders } from "node:http";
import { pipeline } from "node:stream";
import zlib from "node:zlib";
import type { FastifyPluginCallback, FastifyReply } from "fastify";
import { Cancellation, InferenceError } from "../../../core/index";
import { inferWithSharedMemory } from "../../shared-memory/tensor-shared-memory";
import { chooseResponseEncoding, decodeRequestBody, encodeResponseBody } from "../content-encoding";
import { sendError } from "../error-reply";
import { admitHeld, holdOrLetGo } from "../../request-bytes-budget";
import { requestBuffers } from "../../request-buffers";
import { budgetLeaseOf } from "../request-budget-hook";
import { traceHttpExchange } from "../http-trace";
import { type EncodedInferResponse, encodeInferResponse } from "../infer-response-codec";
import { type ModelParams, modelUrls, versionOf } from "./model-url";
import { restrictApiGroup } from "./restrict-api-group";
import type { RawBody, RouteGroupOptions } from "./route-group-options";

const HEADER_LENGTH = "inference-header-content-length";

function headerLengthOf(headers: IncomingHttpHeaders): number | undefined {
  const raw = headers[HEADER_LENGTH];
  if (raw === undefined) return undefined;
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined || !/^[0-9]+$/.test(value.trim())) {
    throw new InferenceError("INVALID_ARG", `Inference-Header-Content-Length must be a non-negative integer, got '${value}'`);
  }
  return Number(value);
}

/** Cancelled when the client disconnects before its response is written, so queued work can be dropped. */
export function clientGone(reply: FastifyReply): Cancellation {
  const cancellation = new Cancellation();
  // The response closes early exactly when the client went away (or the socket broke) before the answer.
  reply.raw.once("close", () => {
    if (!reply.raw.writableFinished) cancellation.abort();
  });
  return cancellation;
}

/**
 * Sends an infer response. As Triton, only a successful inference response is compressed (per Accept-Encoding):
 * clients that ask for compression and then do not decompress (aiohttp, as tritonclient.http.aio sets it up) read
 * every other answer as it is.
 */
async function sendInferResponse(reply: FastifyReply, encoded: EncodedInferResponse, contentEncoding: "gzip" | "deflate" | undefined): Promise<FastifyReply> {
  if (encoded.headerLength === undefined) reply.type("application/json");
  else reply.type("application/octet-stream").header(HEADER_LENGTH, encoded.headerLength);
  if (contentEncoding !== undefined) reply.header("content-encoding", contentEncoding);
  const body = encoded.body;
  if (body.kind === "buffer") return reply.send(contentEncoding === undefined ? body.bytes : await encodeResponseBody(body.bytes, contentEncoding));
  if (contentEncoding === undefined) {
    if (body.byteLength !== undefined) reply.header("content-length", body.byteLength);
    return reply.send(body.stream);
  }
  const compressor = contentEncoding === "gzip" ? zlib.createGzip() : zlib.createDeflate();
  // A failure of either stream destroys the compressor, which fastify watches: the response is cut short.
  pipeline(body.stream, compressor, () => undefined);
  return reply.send(compressor);
}

/**
 * Triton's inference group: a model's infer route, JSON and binary tensors (Triton's binary extension) and
 * shared memory regions in, gzip/deflate request bodies, and (as Triton) compressed responses.
 */
export const inferRoutes: FastifyPluginCallback<RouteGroupOptions> = (scope, { core, tracer, sharedMemory, restrictions, working, maxInputBytes, crossSite, decoder }, done) => {
  restrictApiGroup(scope, "inference", restrictions);
  scope.addHook("preHandler", working);
  for (const url of modelUrls("/infer")) {
    scope.post<{ Params: ModelParams; Body: RawBody }>(url, async (request, reply) => {
      const { model } = request.params;
      const trace = tracer.sample(model);
      if (trace !== undefined) traceHttpExchange(trace, reply);
      const modelVersion = versionOf(request.params);
      const handle = core.model(model, modelVersion);
      // Triton's CheckTransactionPolicy (src/http_server.cc): a decoupled model's responses need generate_stream or gRPC.
      if (handle.decoupled) throw new InferenceError("UNSUPPORTED", "HTTP end point doesn't support models with decoupled transaction policy");
      const lease = budgetLeaseOf(request);
      const body = await decodeRequestBody(request.body, request.headers["content-encoding"], maxInputBytes, lease);
      const headerLength = headerLengthOf(request.headers);
      // The JSON text the body (or its binary header) is parsed from is a copy of it, as long as its bytes at most.
      holdOrLetGo([request.body, body], () => lease?.holdMore(headerLength ?? body.byteLength));
      const { request: inferRequest, encoding, sharedMemory: tensorsInSharedMemory } = await decoder.decode(body, headerLength, {
        modelName: model, modelVersion, modelInputs: () => handle.inputs(),
      });
      // The decoded tensors join the body (which binary ones view) in the budget, and the copies they will cost once
      // admitted with them, before the request is queued: past this point it is never refused for memory.
      admitHeld(lease, [request.body, body, ...inferRequest.inputs.map((input) => input.data)], handle, inferRequest);
      // Writing an output into a region changes a file of this host: refused as the other changing APIs are.
      if (tensorsInSharedMemory !== undefined && Object.keys(tensorsInSharedMemory.outputs).length > 0) {
        const refusal = crossSite.refusal(request.headers);
        if (refusal !== undefined) return sendError(reply, refusal.status, refusal.message);
      }
      const signal = clientGone(reply);
      const { response, placed } = await inferWithSharedMemory(sharedMemory, tensorsInSharedMemory, inferRequest, (ready) => handle.infer({ ...ready, signal, trace }));
      // Answered: the backend read copies of the inputs; once the response (which may still be written) is out,
      // the body's memory can take the next one.
      reply.raw.once("finish", () => requestBuffers.give(request.body));
      trace?.timestamp("HTTP_SEND_START", process.hrtime.bigint());
      return sendInferResponse(reply, await encodeInferResponse(response, encoding, placed), chooseResponseEncoding(request.headers["accept-encoding"]));
    });
  }
  done();
};

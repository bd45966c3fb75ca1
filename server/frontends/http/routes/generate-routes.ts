import { PassThrough } from "node:stream";
import type { FastifyPluginCallback, FastifyReply } from "fastify";
import { asInferenceError, type CancellationSignal, InferenceError, type InferRequest, type ModelHandle, type StreamResponse } from "../../../core/index";
import { sendError } from "../error-reply";
import { decodeRequestBody } from "../content-encoding";
import { generateErrorJson, generateResponseJson } from "../generate-mapping";
import { httpStatusOf } from "../http-status";
import { traceHttpExchange } from "../http-trace";
import { writableFlow } from "../../writable-flow";
import { clientGone } from "./infer-routes";
import { type ModelParams, modelUrls, versionOf } from "./model-url";
import { restrictApiGroup } from "./restrict-api-group";
import type { RawBody, RouteGroupOptions } from "./route-group-options";

/** Triton's answer when /generate gets other than one response (GenerateRequestClass::SendChunkResponse). */
const NOT_ONE_RESPONSE = "generate expects model to produce exactly 1 response, use generate stream for model that generates various number of responses";

/** A failure the request gets as its only answer (its final response, an error). */
function failedOutright(event: StreamResponse): event is { response: InferenceError; final: true } {
  return event.final && event.response instanceof InferenceError;
}

/** One response as JSON (text, or bytes where the model's are not UTF-8), and its status (the first one's is the answer's, as in Triton). */
interface EventJson {
  readonly json: string | Buffer;
  readonly status: number;
}

/**
 * A response as JSON; one that JSON cannot carry (FP16 outputs, BYTES that do not match their shape) becomes its
 * error, as in Triton (GenerateRequestClass::InferResponseComplete adds FinalizeResponse's error in its place, and
 * takes the status from HttpCodeFromError).
 */
function eventJson(response: StreamResponse["response"]): EventJson | undefined {
  if (response === undefined) return undefined;
  if (response instanceof InferenceError) return { json: generateErrorJson(response), status: httpStatusOf(response.code) };
  try {
    return { json: generateResponseJson(response), status: 200 };
  } catch (error) {
    const failure = asInferenceError(error);
    return { json: generateErrorJson(failure), status: httpStatusOf(failure.code) };
  }
}

/**
 * `/generate`: the answer is the model's one response, or Triton's error when there were more or none. Only the
 * first response is kept and formatted, whatever the model streams: a second one already decides the answer. As in
 * Triton the status is the first response's (200 when there was none).
 */
async function generateOnce(model: ModelHandle, request: InferRequest, reply: FastifyReply): Promise<FastifyReply> {
  let first: StreamResponse | undefined;
  let responses = 0;
  await new Promise<void>((resolve) => model.stream(request, (event) => {
    first ??= event;
    if (event.response !== undefined) responses++;
    if (event.final) resolve();
  }));
  const answer = eventJson(first?.response);
  const body = responses === 1 ? answer!.json : JSON.stringify({ error: NOT_ONE_RESPONSE });
  return reply.code(answer?.status ?? 200).type("application/json").send(body);
}

const EVENT_PREFIX = Buffer.from("data: ");
const EVENT_END = Buffer.from("\n\n");

/** One server-sent event: a string as before bytes were possible, bytes only where the JSON holds some. */
function eventOf(json: string | Buffer): string | Buffer {
  return typeof json === "string" ? `data: ${json}\n\n` : Buffer.concat([EVENT_PREFIX, json, EVENT_END]);
}

/**
 * `/generate_stream`: one server-sent event (`data: {...}`) per response as the model sends it, an error response
 * as `data: {"error": ...}`, and the stream ends at the final flag. The status is the first response's. A request
 * refused before it runs gets a JSON error instead: Triton's TRITONSERVER_ServerInferAsync returns such a refusal
 * (the request's checks, a full queue) to HandleGenerate, while a failure once it runs (in the model, an ensemble's
 * step, a timeout in the queue) is the first response, an event. A client that disconnects cancels the request; one that
 * reads slowly holds the model back (flow control: its sends wait while the socket's buffer is full).
 */
async function generateStream(model: ModelHandle, request: InferRequest, reply: FastifyReply): Promise<FastifyReply> {
  const body = new PassThrough();
  let resolveFirst: (event: EventJson | InferenceError | undefined) => void = () => undefined;
  const firstEvent = new Promise<EventJson | InferenceError | undefined>((resolve) => (resolveFirst = resolve));
  let seen = false;
  // The core refuses a request within stream() itself; anything later comes from running it.
  let submitting = true;
  model.stream({ ...request, flow: writableFlow(body) }, (event) => {
    if (!seen) {
      seen = true;
      if (submitting && failedOutright(event)) return resolveFirst(event.response);
    }
    const formatted = eventJson(event.response);
    resolveFirst(formatted);
    if (body.writableEnded || body.destroyed) return;
    if (formatted !== undefined) body.write(eventOf(formatted.json));
    if (event.final) body.end();
  });
  submitting = false;
  const first = await firstEvent;
  if (first instanceof InferenceError) return sendError(reply, httpStatusOf(first.code), first.message);
  return reply
    .code(first?.status ?? 200)
    .type("text/event-stream; charset=utf-8")
    .header("cache-control", "no-cache")
    .send(body);
}

/**
 * Triton's generate extension (docs/protocol/extension_generate.md, HTTPAPIServer::HandleGenerate): a text-oriented
 * request body mapped onto the model's inputs and parameters, answered as one JSON object or as server-sent events.
 * Any model may be asked, decoupled or not. It belongs to the `inference` API group, as in Triton.
 */
export const generateRoutes: FastifyPluginCallback<RouteGroupOptions> = (scope, { core, tracer, restrictions, working, maxInputBytes, decoder }, done) => {
  restrictApiGroup(scope, "inference", restrictions);
  scope.addHook("preHandler", working);
  for (const streaming of [false, true]) {
    for (const url of modelUrls(streaming ? "/generate_stream" : "/generate")) {
      scope.post<{ Params: ModelParams; Body: RawBody }>(url, async (request, reply) => {
        const { model } = request.params;
        const modelVersion = versionOf(request.params);
        const handle = core.model(model, modelVersion);
        const encoding = request.headers["content-encoding"];
        if (encoding !== undefined && encoding !== "identity") {
          throw new InferenceError("INVALID_ARG", "Unsupported content-encoding, only 'identity' is supported.");
        }
        // As /infer's: the body's size bounded, a large one parsed and mapped on a worker thread.
        const body = await decodeRequestBody(request.body, undefined, maxInputBytes);
        const inferRequest = await decoder.decodeGenerate(body, { name: handle.name, inputs: handle.tensors().inputs }, modelVersion);
        const trace = tracer.sample(model);
        if (trace !== undefined) traceHttpExchange(trace, reply);
        const signal: CancellationSignal = clientGone(reply);
        const run = { ...inferRequest, signal, trace };
        return streaming ? generateStream(handle, run, reply) : generateOnce(handle, run, reply);
      });
    }
  }
  done();
};

import { type ServerDuplexStream, status, type StatusObject } from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { InferenceCore, ModelHandle } from "../../core/index";
import type { RequestTrace, Tracer } from "../../tracing/index";
import type { ModelInferRequest__Output } from "../../../protocol/grpc-types/longs-as-strings/inference/ModelInferRequest";
import type { ModelInferResponse } from "../../../protocol/grpc-types/longs-as-strings/inference/ModelInferResponse";
import type { ModelStreamInferResponse } from "../../../protocol/grpc-types/longs-as-strings/inference/ModelStreamInferResponse";
import { type FramedMessage, frameInferResponse } from "./framed-infer-response";
import { grpcErrorOf } from "./grpc-status";
import { traceGrpcReceive, traceGrpcSend } from "./grpc-trace";
import type { SystemSharedMemory } from "../shared-memory/system-shared-memory";
import { modelInferHeld, modelOf } from "./model-infer";
import { decoupledStreamInfer, type StreamedResponse } from "./decoupled-stream-infer";
import type { RequestBytesBudget } from "../request-bytes-budget";
import { writableFlow } from "../writable-flow";
import { type GrpcInferRequestDecoder, type ModelInferMessage, UndecodedInferRequest } from "./off-thread-infer-request";

export type ModelStreamInferCall = ServerDuplexStream<ModelInferRequest__Output | UndecodedInferRequest, ModelStreamInferResponse | FramedMessage>;

/**
 * Requests one stream may have in the core at once. Beyond it the server stops reading, so HTTP/2 flow control
 * holds the client back instead of the server buffering without bound.
 */
const MAX_IN_FLIGHT_PER_STREAM = 64;

/** Triton's opt-in (stream header `triton_grpc_error: true`): end the stream with the first error's status. */
const STATUS_ON_ERROR_HEADER = "triton_grpc_error";

/**
 * A one-to-one model's response is its request's last, and Triton marks it so. `triton_enable_empty_final_response`
 * asks for an empty response after a decoupled model's last one (decoupled-stream-infer.ts); as in Triton, a
 * one-to-one model sends none (request-parameters.ts checks the flag's type).
 */
const FINAL_RESPONSE_PARAMETERS = { triton_final_response: { bool_param: true } };

/** One open ModelStreamInfer call. */
export interface StreamInferSession {
  /** Stops reading; the stream ends (status OK) once the responses already owed are written. */
  finish(): void;
  /** Settles when the stream is over, however it ended. */
  readonly done: Promise<void>;
}

type Outcome = { readonly response: FramedMessage } | { readonly error: Pick<StatusObject, "code" | "details">; readonly id: string };

/** A one-to-one request's outcome, to be written in its turn, and its trace. */
interface Ordered {
  readonly outcome: Promise<Outcome>;
  readonly trace: RequestTrace | undefined;
}

/**
 * Serves a ModelStreamInfer call: requests run concurrently, responses are written in request order, each marked
 * `triton_final_response`, and a failed request answers `error_message` (with its `id`) while the stream goes
 * on, as in Triton. With the
 * `triton_grpc_error: true` header the first failure instead ends the stream with its gRPC status. A client
 * that cancels drops whatever it still had queued. `serializeInferResponse` is ModelInfer's response serializer
 * (frameInferResponse).
 */
export function serveModelStreamInfer(
  core: InferenceCore, sharedMemory: SystemSharedMemory, budget: RequestBytesBudget, call: ModelStreamInferCall, logger: Logger, tracer: Tracer,
  serializeInferResponse: (message: ModelInferResponse) => Buffer, decoder: GrpcInferRequestDecoder,
): StreamInferSession {
  const statusOnError = call.metadata.get(STATUS_ON_ERROR_HEADER).some((v) => String(v).toLowerCase() === "true");
  const controller = new AbortController();
  const flow = writableFlow(call);
  let written: Promise<void> = Promise.resolve();
  let inFlight = 0;
  let accepting = true;
  let closed = false;
  let resolveDone: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));

  const close = (error?: Pick<StatusObject, "code" | "details">): void => {
    if (closed) return;
    closed = true;
    accepting = false;
    controller.abort();
    if (error !== undefined) call.emit("error", error);
    else call.end();
    resolveDone();
  };

  const run = async (model: ModelHandle | Error, message: ModelInferMessage, trace: RequestTrace | undefined): Promise<Outcome> => {
    try {
      if (model instanceof Error) throw model;
      const lease = budget.lease();
      try {
        const response = await modelInferHeld(model, sharedMemory, lease, message, controller.signal, trace);
        return { response: await frameInferResponse({ ...response, parameters: FINAL_RESPONSE_PARAMETERS }, serializeInferResponse, true) };
      } finally {
        lease.release();
      }
    } catch (error) {
      const failure = grpcErrorOf(error);
      if (failure.code === status.INTERNAL) logger.error({ err: error }, "ModelStreamInfer request failed");
      return { error: failure, id: message.id };
    }
  };

  const deliver = (result: Outcome): void => {
    if ("response" in result) call.write(result.response);
    else if (statusOnError) close(result.error);
    else call.write({ error_message: result.error.details, infer_response: { id: result.id } });
  };

  // A decoupled model's responses are written as they come, not in request order (as in Triton).
  const decoupled = new Set<Promise<void>>();
  const writeStreamed = (streamed: StreamedResponse, trace: RequestTrace | undefined): void => {
    if (closed) return;
    const send = (): void => {
      if ("message" in streamed) call.write(streamed.message);
      else if (statusOnError) close(grpcErrorOf(streamed.error));
      else call.write({ error_message: streamed.error.message, infer_response: { id: streamed.id, parameters: { triton_final_response: { bool_param: streamed.final } } } });
    };
    if (trace !== undefined && streamed.final) traceGrpcSend(trace, send);
    else send();
  };
  const runDecoupled = (model: ModelHandle, message: ModelInferMessage, trace: RequestTrace | undefined): void => {
    const running = decoupledStreamInfer(model, budget, message, { signal: controller.signal, flow }, trace, (streamed) => writeStreamed(streamed, trace)).then(() => {
      decoupled.delete(running);
      inFlight--;
      if (accepting && !closed && call.isPaused() && inFlight < MAX_IN_FLIGHT_PER_STREAM) call.resume();
    });
    decoupled.add(running);
  };
  /** The message's model, resolved once; an unknown or unavailable one is answered in order, as a one-to-one failure. */
  const resolve = (message: ModelInferMessage): ModelHandle | Error => {
    try {
      return modelOf(core, message);
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
  };
  const allWritten = async (): Promise<void> => {
    await written;
    await Promise.all(decoupled);
  };

  /** A decoded message: a decoupled model's request runs on its own; any other's outcome waits for its turn. */
  const accept = (message: ModelInferMessage): Ordered | undefined => {
    const trace = tracer.sample(message.model_name);
    if (trace !== undefined) traceGrpcReceive(trace);
    const model = resolve(message);
    if (!(model instanceof Error) && model.decoupled) {
      runDecoupled(model, message, trace);
      return undefined;
    }
    return { outcome: run(model, message, trace), trace };
  };
  /** Writes an outcome once every one before it was written; undefined: a decoupled request, which writes its own. */
  const inTurn = (ordered: Ordered | undefined | Promise<Ordered | undefined>): void => {
    written = written.then(async () => {
      const entry = await ordered;
      if (entry === undefined) return;
      const result = await entry.outcome;
      inFlight--;
      if (closed) return entry.trace?.end();
      if (accepting && call.isPaused() && inFlight < MAX_IN_FLIGHT_PER_STREAM) call.resume();
      if (entry.trace === undefined) deliver(result);
      else traceGrpcSend(entry.trace, () => deliver(result));
    });
  };

  call.on("data", (received: ModelInferRequest__Output | UndecodedInferRequest) => {
    if (!accepting) return;
    inFlight++;
    if (inFlight >= MAX_IN_FLIGHT_PER_STREAM) call.pause();
    if (!(received instanceof UndecodedInferRequest)) {
      const ordered = accept(received);
      if (ordered !== undefined) inTurn(ordered);
      return;
    }
    // A large message is decoded on a worker first; its turn among the responses is kept meanwhile. One that is not
    // a ModelInferRequest ends the stream, as grpc-js ends it for a message its deserializer refuses.
    inTurn(decoder.decode(received).then(accept, (error: unknown) => {
      inFlight--;
      close(grpcErrorOf(error));
      return undefined;
    }));
  });
  call.on("end", () => void allWritten().then(() => close()));
  call.on("cancelled", () => {
    closed = true;
    accepting = false;
    controller.abort();
    resolveDone();
  });
  call.on("error", () => resolveDone());

  const finish = (): void => {
    accepting = false;
    call.pause();
    void allWritten().then(() => close());
  };
  return { finish, done };
}

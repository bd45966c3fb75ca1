import type { ServerInterceptingCall, ServerInterceptor } from "@grpc/grpc-js";
import { BaseServerInterceptingCall } from "@grpc/grpc-js/build/src/server-interceptors";
import { StreamDecoder } from "@grpc/grpc-js/build/src/stream-decoder";
import { FramedMessage } from "./framed-infer-response";
import { GrpcMessageAssembler } from "./grpc-message-assembler";

/** grpc-js's own call (BaseServerInterceptingCall), the members this module replaces. */
interface BaseCall {
  /** A StreamDecoder: `handleDataFrame` hands it each DATA chunk and takes the framed messages it completes. */
  decoder: { write(data: Buffer): Buffer[]; readonly maxReadMessageLength?: number };
  /** What `sendMessage` calls to turn a response message into the framed bytes it writes. */
  serializeMessage(value: unknown): Buffer;
}

function isBaseCall(value: unknown): value is BaseCall {
  if (typeof value !== "object" || value === null) return false;
  const call = value as Partial<BaseCall>;
  return typeof call.serializeMessage === "function" && typeof call.decoder === "object"
    && typeof call.decoder.write === "function" && typeof call.decoder.maxReadMessageLength === "number";
}

const CHANGED_SHAPE = "this @grpc/grpc-js version no longer has the call internals the gRPC endpoint replaces "
  + "(BaseServerInterceptingCall's decoder and serializeMessage, StreamDecoder's maxReadMessageLength); see server/frontends/grpc/grpc-call-internals.ts";

/**
 * Throws when grpc-js's private call internals that {@link grpcCallInternals} replaces are not there: call at
 * start-up, so a grpc-js upgrade that changes them fails the server's start (and every gRPC test) rather than
 * quietly serving `FramedMessage`s through protobufjs.
 */
export function checkGrpcCallInternals(): void {
  const decoder: unknown = new StreamDecoder(1);
  const prototype: unknown = BaseServerInterceptingCall.prototype;
  if (typeof Reflect.get(decoder as object, "write") !== "function" || Reflect.get(decoder as object, "maxReadMessageLength") !== 1
    || typeof Reflect.get(prototype as object, "serializeMessage") !== "function" || typeof Reflect.get(prototype as object, "handleDataFrame") !== "function") {
    throw new Error(CHANGED_SHAPE);
  }
}

/**
 * Replaces two private parts of each grpc-js server call, the only ones a large message's bytes are copied in:
 *
 * - its StreamDecoder, by a {@link GrpcMessageAssembler}: grpc-js keeps a request message's chunks until its last one
 *   arrives, then joins them in one synchronous copy; the assembler copies each chunk into the message as it arrives
 *   and keeps none. (This also drops the chunks of every message once it is handed over, which grpc-js's decoder
 *   keeps until the next message starts, for a unary call its whole life: measured on 600 KB ModelInfer calls,
 *   17-18 mark-compacts per 1,000 calls with them, 9-11 without.)
 * - its `serializeMessage`, which writes a {@link FramedMessage} (a response the handler serialized and framed
 *   itself, frameInferResponse) as it is, and serializes anything else as grpc-js does.
 *
 * This reaches into grpc-js's private call (as http2-servers.ts reaches its HTTP/2 servers); call
 * {@link checkGrpcCallInternals} at start-up. It must be the first interceptor: only the first is handed grpc-js's
 * own call.
 */
export function grpcCallInternals(): ServerInterceptor {
  return (_method, call) => {
    const base: unknown = call;
    if (!isBaseCall(base)) throw new Error(CHANGED_SHAPE);
    // grpc-js's --grpc-max-message-size (-1: none), as its decoder was given it.
    base.decoder = new GrpcMessageAssembler(base.decoder.maxReadMessageLength!);
    const serialize = base.serializeMessage.bind(base);
    base.serializeMessage = (value: unknown): Buffer => (value instanceof FramedMessage ? value.frame : serialize(value));
    // grpc-js declares a ServerInterceptingCall but uses only its interface (as callLogger in grpc-server.ts).
    return call as ServerInterceptingCall;
  };
}

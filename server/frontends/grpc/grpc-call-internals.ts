import { type ServerInterceptingCall, type ServerInterceptor, status, type StatusObject } from "@grpc/grpc-js";
import { BaseServerInterceptingCall } from "@grpc/grpc-js/build/src/server-interceptors";
import { StreamDecoder } from "@grpc/grpc-js/build/src/stream-decoder";
import { CorruptCompressedData, inflateChecked } from "../inflate-checked";
import type { RequestBytesBudget } from "../request-bytes-budget";
import { FramedMessage } from "./framed-infer-response";
import { GrpcMessageAssembler } from "./grpc-message-assembler";
import { grpcErrorOf } from "./grpc-status";

/** grpc-js's own call (BaseServerInterceptingCall), the members this module replaces. */
interface BaseCall {
  /** A StreamDecoder: `handleDataFrame` hands it each DATA chunk and takes the framed messages it completes. */
  decoder: { write(data: Buffer): Buffer[]; readonly maxReadMessageLength?: number };
  /** What `sendMessage` calls to turn a response message into the framed bytes it writes. */
  serializeMessage(value: unknown): Buffer;
  /** What undoes a framed message's grpc-encoding; it rejects with the status that ends the call. */
  decompressMessage(message: Buffer, encoding: string): Buffer | Promise<Buffer>;
  /** The call's node:http2 stream. */
  readonly stream: { once(event: "close", listener: () => void): unknown };
}

function isBaseCall(value: unknown): value is BaseCall {
  if (typeof value !== "object" || value === null) return false;
  const call = value as Partial<BaseCall>;
  return typeof call.serializeMessage === "function" && typeof call.decompressMessage === "function" && typeof call.stream?.once === "function"
    && typeof call.decoder === "object" && typeof call.decoder.write === "function" && typeof call.decoder.maxReadMessageLength === "number";
}

const CHANGED_SHAPE = "this @grpc/grpc-js version no longer has the call internals the gRPC endpoint replaces "
  + "(BaseServerInterceptingCall's decoder, serializeMessage, decompressMessage and stream, StreamDecoder's maxReadMessageLength); "
  + "see server/frontends/grpc/grpc-call-internals.ts";

/** What grpc-js's own decompression rejects with, and sends as the call's status. */
function callStatus(code: status, details: string): Error & Pick<StatusObject, "code" | "details"> {
  return Object.assign(new Error(details), { code, details });
}

class DecompressesPastLimit extends Error {}

/**
 * Inflates a gzip or deflate message (its 5-byte prefix included), holding the message and what it inflates to
 * (and its chunks' join) against `budget` as it is produced: a small bomb is refused RESOURCE_EXHAUSTED once its
 * output passes the message limit (grpc-js's text) or the budget, without producing the rest. Let go of once
 * inflated, when the message is held by its request (model-infer.ts). Rejects with the status that ends the call,
 * as grpc-js's does.
 */
async function inflateMessage(message: Buffer, encoding: "gzip" | "deflate", maxMessageBytes: number, budget: RequestBytesBudget): Promise<Buffer> {
  const lease = budget.lease();
  try {
    lease.holdAtLeast(message.byteLength);
    return await inflateChecked(message.subarray(5), encoding, (produced, joined) => {
      if (maxMessageBytes !== -1 && produced > maxMessageBytes) throw new DecompressesPastLimit(`Received message that decompresses to a size larger than ${maxMessageBytes}`);
      lease.holdAtLeast(message.byteLength + produced + joined);
    });
  } catch (error) {
    if (error instanceof DecompressesPastLimit) throw callStatus(status.RESOURCE_EXHAUSTED, error.message);
    if (error instanceof CorruptCompressedData) throw callStatus(status.INTERNAL, "Failed to decompress message");
    const { code, details } = grpcErrorOf(error);
    throw callStatus(code, details);
  } finally {
    lease.release();
  }
}

/** Makes `assembler` the call's decoder, letting go of what it holds when the call's stream closes. */
function assembleHeld(base: BaseCall, assembler: GrpcMessageAssembler): void {
  base.decoder = assembler;
  base.stream.once("close", () => assembler.letGo());
}

/**
 * Has a unary call's message held against `budget` as its bytes arrive and as it is inflated. A ModelStreamInfer
 * message is held as it arrives without being refused (refused there, its whole stream would end, where Triton
 * answers the one request with an error response and the stream goes on): it may overdraw the budget, and the
 * others are refused meanwhile; its request is refused, alone, once it is decoded.
 */
function countReceivedBytes(base: BaseCall, maxMessageBytes: number, budget: RequestBytesBudget): void {
  assembleHeld(base, new GrpcMessageAssembler(maxMessageBytes, budget));
  const decompress = base.decompressMessage.bind(base);
  base.decompressMessage = (message: Buffer, encoding: string): Buffer | Promise<Buffer> =>
    (encoding === "gzip" || encoding === "deflate" ? inflateMessage(message, encoding, maxMessageBytes, budget) : decompress(message, encoding));
}

/**
 * Throws when grpc-js's private call internals that {@link grpcCallInternals} replaces are not there: call at
 * start-up, so a grpc-js upgrade that changes them fails the server's start (and every gRPC test) rather than
 * quietly serving `FramedMessage`s through protobufjs.
 */
export function checkGrpcCallInternals(): void {
  const decoder: unknown = new StreamDecoder(1);
  const prototype: unknown = BaseServerInterceptingCall.prototype;
  if (typeof Reflect.get(decoder as object, "write") !== "function" || Reflect.get(decoder as object, "maxReadMessageLength") !== 1
    || typeof Reflect.get(prototype as object, "serializeMessage") !== "function" || typeof Reflect.get(prototype as object, "handleDataFrame") !== "function"
    || typeof Reflect.get(prototype as object, "decompressMessage") !== "function") {
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
 * - for a unary call, its `decompressMessage` of gzip and deflate messages, which counts what it inflates against
 *   `budget` as it goes ({@link inflateMessage}); grpc-js's bounds only the output, by the message limit, and only
 *   once produced. The assembler holds each message's bytes against `budget` as they arrive (a streaming call's
 *   without refusing them), and lets go of them when the call's stream closes part-way through it
 *   ({@link countReceivedBytes}).
 *
 * This reaches into grpc-js's private call (as http2-servers.ts reaches its HTTP/2 servers); call
 * {@link checkGrpcCallInternals} at start-up. It must be the first interceptor: only the first is handed grpc-js's
 * own call.
 */
export function grpcCallInternals(budget: RequestBytesBudget): ServerInterceptor {
  return (method, call) => {
    const base: unknown = call;
    if (!isBaseCall(base)) throw new Error(CHANGED_SHAPE);
    // grpc-js's --grpc-max-message-size (-1: none), as its decoder was given it.
    const maxMessageBytes = base.decoder.maxReadMessageLength!;
    if (method.requestStream) {
      assembleHeld(base, new GrpcMessageAssembler(maxMessageBytes, budget, true));
    } else {
      countReceivedBytes(base, maxMessageBytes, budget);
    }
    const serialize = base.serializeMessage.bind(base);
    base.serializeMessage = (value: unknown): Buffer => (value instanceof FramedMessage ? value.frame : serialize(value));
    // grpc-js declares a ServerInterceptingCall but uses only its interface (as callLogger in grpc-server.ts).
    return call as ServerInterceptingCall;
  };
}

import { type handleUnaryCall, type sendUnaryData, type ServerUnaryCall, status } from "@grpc/grpc-js";
import type { Logger } from "pino";
import { grpcErrorOf } from "./grpc-status";

/**
 * Ends a unary call with what `answer` settles with: its result is the response; what it rejects with ends the call
 * with the mapped status (core errors keep their message; anything else is INTERNAL and logged).
 */
export function answerCall<Response>(logger: Logger, call: ServerUnaryCall<unknown, Response>, callback: sendUnaryData<Response>, answer: Promise<Response>): void {
  answer.then(
    (response) => callback(null, response),
    (error: unknown) => {
      const failure = grpcErrorOf(error);
      if (failure.code === status.INTERNAL) logger.error({ err: error, rpc: call.getPath() }, "gRPC call failed");
      callback(failure);
    },
  );
}

/** Adapts an async function to a grpc-js unary handler, answered as {@link answerCall} says. */
export function unaryHandler<Request, Response>(
  logger: Logger,
  handle: (request: Request, call: ServerUnaryCall<Request, Response>) => Response | Promise<Response>,
): handleUnaryCall<Request, Response> {
  return (call, callback) => {
    const answer = async (): Promise<Response> => handle(call.request, call);
    answerCall(logger, call, callback, answer());
  };
}

import { status } from "@grpc/grpc-js";
import {
  InferenceServerError, InternalServerError, InvalidArgumentError, NotFoundError, RequestTimeoutError, ServerUnreachableError,
  TRITON_HTTP_STATUS, UnavailableError, UnsupportedError,
} from "./inference-server-error";

/** The fields of a failed gRPC call that the mapping reads. */
export interface GrpcCallFailure {
  readonly code: status;
  readonly details: string;
}

/** grpc-js's words when no connection to the server could be made. */
const NO_CONNECTION = /No connection established/;

/**
 * Triton's gRPC status for each error code, read backwards. Each error carries the HTTP status Triton's HTTP
 * endpoint answers that code with ({@link TRITON_HTTP_STATUS}), so code that checks `httpStatus` works over
 * either protocol. UNAVAILABLE because no connection could be made becomes {@link ServerUnreachableError};
 * DEADLINE_EXCEEDED is the call's own timeout: neither had a server answer, so neither has a status.
 */
export function errorFromGrpcStatus(failure: GrpcCallFailure, target: string): InferenceServerError {
  switch (failure.code) {
    case status.INVALID_ARGUMENT:
      return new InvalidArgumentError(failure.details, TRITON_HTTP_STATUS.INVALID_ARG);
    case status.NOT_FOUND:
      return new NotFoundError(failure.details, TRITON_HTTP_STATUS.NOT_FOUND);
    case status.UNIMPLEMENTED:
      return new UnsupportedError(failure.details, TRITON_HTTP_STATUS.UNSUPPORTED);
    case status.INTERNAL:
      return new InternalServerError(failure.details, TRITON_HTTP_STATUS.INTERNAL);
    case status.DEADLINE_EXCEEDED:
      return new RequestTimeoutError(`no answer from ${target} in time: ${failure.details}`);
    case status.UNAVAILABLE:
      return NO_CONNECTION.test(failure.details)
        ? new ServerUnreachableError(`cannot reach the inference server at ${target}: ${failure.details}`, /\bE[A-Z]{3,}\b/.exec(failure.details)?.[0] ?? "no connection", failure)
        : new UnavailableError(failure.details, TRITON_HTTP_STATUS.UNAVAILABLE);
    case status.ALREADY_EXISTS:
      return new InferenceServerError("ALREADY_EXISTS", failure.details, TRITON_HTTP_STATUS.ALREADY_EXISTS);
    case status.CANCELLED:
      return new InferenceServerError("CANCELLED", failure.details, TRITON_HTTP_STATUS.CANCELLED);
    default:
      return new InferenceServerError("UNKNOWN", `${status[failure.code] ?? failure.code}: ${failure.details}`, TRITON_HTTP_STATUS.UNKNOWN);
  }
}

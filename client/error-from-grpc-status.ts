import { status } from "@grpc/grpc-js";
import {
  InferenceServerError, InternalServerError, InvalidArgumentError, NotFoundError, RequestTimeoutError, ServerUnreachableError,
  UnavailableError, UnsupportedError,
} from "./inference-server-error";

/** The fields of a failed gRPC call that the mapping reads. */
export interface GrpcCallFailure {
  readonly code: status;
  readonly details: string;
}

/** grpc-js's words when no connection to the server could be made. */
const NO_CONNECTION = /No connection established/;

/**
 * Triton's gRPC status for each error code, read backwards. UNAVAILABLE because no connection could be made
 * becomes {@link ServerUnreachableError}; DEADLINE_EXCEEDED is the call's own timeout.
 */
export function errorFromGrpcStatus(failure: GrpcCallFailure, target: string): InferenceServerError {
  switch (failure.code) {
    case status.INVALID_ARGUMENT:
      return new InvalidArgumentError(failure.details);
    case status.NOT_FOUND:
      return new NotFoundError(failure.details);
    case status.UNIMPLEMENTED:
      return new UnsupportedError(failure.details);
    case status.INTERNAL:
      return new InternalServerError(failure.details);
    case status.DEADLINE_EXCEEDED:
      return new RequestTimeoutError(`no answer from ${target} in time: ${failure.details}`);
    case status.UNAVAILABLE:
      return NO_CONNECTION.test(failure.details)
        ? new ServerUnreachableError(`cannot reach the inference server at ${target}: ${failure.details}`, /\bE[A-Z]{3,}\b/.exec(failure.details)?.[0] ?? "no connection", failure)
        : new UnavailableError(failure.details);
    case status.ALREADY_EXISTS:
      return new InferenceServerError("ALREADY_EXISTS", failure.details);
    case status.CANCELLED:
      return new InferenceServerError("CANCELLED", failure.details);
    default:
      return new InferenceServerError("UNKNOWN", `${status[failure.code] ?? failure.code}: ${failure.details}`);
  }
}

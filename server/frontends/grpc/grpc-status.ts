import { status, type StatusObject } from "@grpc/grpc-js";
import { type ErrorCode, InferenceError } from "../../core/index";

/** Triton's GrpcStatusUtil::CodeToStatus; the only place core error codes become gRPC status codes. */
const STATUS_BY_CODE: Readonly<Record<ErrorCode, status>> = {
  UNKNOWN: status.UNKNOWN,
  INTERNAL: status.INTERNAL,
  NOT_FOUND: status.NOT_FOUND,
  INVALID_ARG: status.INVALID_ARGUMENT,
  UNAVAILABLE: status.UNAVAILABLE,
  UNSUPPORTED: status.UNIMPLEMENTED,
  ALREADY_EXISTS: status.ALREADY_EXISTS,
  CANCELLED: status.CANCELLED,
};

export function grpcStatusOf(code: ErrorCode): status {
  return STATUS_BY_CODE[code];
}

/**
 * The status a failed call ends with: an {@link InferenceError} keeps its message (meant for the client);
 * anything else is a bug, answered INTERNAL without leaking its details.
 */
export function grpcErrorOf(error: unknown): Pick<StatusObject, "code" | "details"> {
  if (error instanceof InferenceError) return { code: grpcStatusOf(error.code), details: error.message };
  return { code: status.INTERNAL, details: "internal server error" };
}

import { status, type StatusObject } from "@grpc/grpc-js";
import { clipped, type ErrorCode, InferenceError } from "../../core/index";
import { RequestBudgetExceeded, RequestLargerThanBudget } from "../request-bytes-budget";

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
 * Most characters of a status message as it travels (grpc-js percent-encodes it into the grpc-message trailer):
 * well inside the 8 KiB of metadata common clients accept, beyond which they drop the whole connection.
 */
const MAX_ENCODED_DETAILS = 4096;

/** Length once percent-encoded: printable ASCII stays, every other UTF-8 byte becomes %XX. */
function encodedLength(text: string): number {
  let length = 0;
  for (const byte of Buffer.from(text)) length += byte >= 0x20 && byte <= 0x7e ? 1 : 3;
  return length;
}

/** `details` shortened until its encoded form fits the trailer (only non-ASCII text can need more than one pass). */
function fittingTrailer(details: string): string {
  let fitted = details;
  for (let max = details.length; encodedLength(fitted) > MAX_ENCODED_DETAILS; max = Math.floor(max / 2)) {
    fitted = clipped(details, Math.floor(max / 2));
  }
  return fitted;
}

/**
 * The status a failed call ends with: an {@link InferenceError} keeps its message (meant for the client), cut to
 * fit the trailer; anything else is a bug, answered INTERNAL without leaking its details.
 */
export function grpcErrorOf(error: unknown): Pick<StatusObject, "code" | "details"> {
  // A full in-flight budget is a shortage of memory, not a server that is down (UNAVAILABLE, as a full queue); a
  // message larger than the whole budget is refused as one over --grpc-max-message-size is.
  if (error instanceof RequestBudgetExceeded || error instanceof RequestLargerThanBudget) return { code: status.RESOURCE_EXHAUSTED, details: error.message };
  if (error instanceof InferenceError) return { code: grpcStatusOf(error.code), details: fittingTrailer(error.message) };
  return { code: status.INTERNAL, details: "internal server error" };
}

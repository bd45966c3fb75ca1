import type { ErrorCode } from "../protocol/error-codes";

/** Triton's error codes (the core's TRITONSERVER_Error codes), shared by the HTTP and gRPC endpoints. */
export type InferenceErrorCode = ErrorCode;

/**
 * The HTTP status Triton's HTTP endpoint answers each error code with (`HttpCodeFromError`): HTTP cannot tell
 * INVALID_ARG, ALREADY_EXISTS, CANCELLED and UNKNOWN apart, all are 400.
 */
export const TRITON_HTTP_STATUS: Readonly<Record<InferenceErrorCode, number>> = {
  INVALID_ARG: 400, NOT_FOUND: 404, UNAVAILABLE: 503, UNSUPPORTED: 501, ALREADY_EXISTS: 400, CANCELLED: 400, INTERNAL: 500, UNKNOWN: 400,
};

/**
 * An error the inference server reported, or the reason it could not be reached. `code` is Triton's error code,
 * `httpStatus` the HTTP status of the answer: the response's over HTTP, the one Triton's HTTP endpoint gives the
 * same error over gRPC ({@link TRITON_HTTP_STATUS}); undefined when no server answered (unreachable, timed out).
 * Catch the subclasses to tell cases apart.
 */
export class InferenceServerError extends Error {
  override readonly name: string = "InferenceServerError";

  constructor(readonly code: InferenceErrorCode, message: string, readonly httpStatus?: number, options?: ErrorOptions) {
    super(message, options);
  }
}

/** The request was malformed or does not fit the model (HTTP 400). */
export class InvalidArgumentError extends InferenceServerError {
  override readonly name = "InvalidArgumentError";

  constructor(message: string, httpStatus?: number) {
    super("INVALID_ARG", message, httpStatus);
  }
}

/** Unknown model, version or path (HTTP 404). */
export class NotFoundError extends InferenceServerError {
  override readonly name = "NotFoundError";

  constructor(message: string, httpStatus?: number) {
    super("NOT_FOUND", message, httpStatus);
  }
}

/** The server or model cannot take the request now: shutting down, queue full, queue timeout (HTTP 503). */
export class UnavailableError extends InferenceServerError {
  override readonly name: string = "UnavailableError";

  constructor(message: string, httpStatus?: number, options?: ErrorOptions) {
    super("UNAVAILABLE", message, httpStatus, options);
  }
}

/** The server does not implement what was asked (HTTP 501, or 405 for a verb the path does not take). */
export class UnsupportedError extends InferenceServerError {
  override readonly name = "UnsupportedError";

  constructor(message: string, httpStatus?: number) {
    super("UNSUPPORTED", message, httpStatus);
  }
}

/** The server failed while handling a valid request (HTTP 500). */
export class InternalServerError extends InferenceServerError {
  override readonly name = "InternalServerError";

  constructor(message: string, httpStatus?: number) {
    super("INTERNAL", message, httpStatus);
  }
}

/**
 * No connection could be made or kept (refused, reset, DNS failure). `reason` is the short network cause
 * (`ECONNREFUSED`, ...), `cause` the underlying error.
 */
export class ServerUnreachableError extends UnavailableError {
  override readonly name = "ServerUnreachableError";

  constructor(message: string, readonly reason: string, cause: unknown) {
    super(message, undefined, { cause });
  }
}

/** The call's `timeoutMs` passed before the server answered. */
export class RequestTimeoutError extends UnavailableError {
  override readonly name = "RequestTimeoutError";

  constructor(message: string) {
    super(message);
  }
}

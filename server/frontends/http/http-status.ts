import type { ErrorCode } from "../../core/index";

/** Triton's HttpCodeFromError (since 24.01); the only place core error codes become HTTP statuses. */
const STATUS_BY_CODE: Readonly<Record<ErrorCode, number>> = {
  INTERNAL: 500, NOT_FOUND: 404, UNAVAILABLE: 503, UNSUPPORTED: 501,
  UNKNOWN: 400, INVALID_ARG: 400, ALREADY_EXISTS: 400, CANCELLED: 400,
};

export function httpStatusOf(code: ErrorCode): number {
  return STATUS_BY_CODE[code];
}

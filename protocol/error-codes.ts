/**
 * Triton's error codes (TRITONSERVER_Error's), the one set every layer names: the core's errors, a backend's or
 * a TypeScript model's refusal of one request, the client's errors. A leaf module with no imports; each frontend
 * maps these to its own status codes in exactly one file.
 */

export const ERROR_CODES = [
  "INVALID_ARG", "NOT_FOUND", "UNAVAILABLE", "UNSUPPORTED", "ALREADY_EXISTS", "CANCELLED", "INTERNAL", "UNKNOWN",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

const ERROR_CODE_SET: ReadonlySet<unknown> = new Set(ERROR_CODES);

export function isErrorCode(value: unknown): value is ErrorCode {
  return ERROR_CODE_SET.has(value);
}

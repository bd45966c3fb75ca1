import type { ErrorCode } from "../../protocol/error-codes";

/** The most characters of one client-supplied string (a model, tensor or parameter name) an error message echoes. */
export const MAX_ECHOED_CHARS = 256;

/**
 * The most characters of any error message: a backstop for echoes not clipped where they are quoted. A gRPC
 * status travels in a trailer, and common clients refuse (and drop the connection for) metadata over 8 KiB.
 */
export const MAX_MESSAGE_CHARS = 4096;

/**
 * `text` as an error message may echo it: at most `max` characters, then an ellipsis and the original length.
 * Never splits a surrogate pair.
 */
export function clipped(text: string, max = MAX_ECHOED_CHARS): string {
  if (text.length <= max) return text;
  const end = /[\uD800-\uDBFF]/.test(text[max - 1]!) ? max - 1 : max;
  return `${text.slice(0, end)}…(${text.length} chars)`;
}

/** The one error type the core throws; the message is what the client sees (at most {@link MAX_MESSAGE_CHARS}). */
export class InferenceError extends Error {
  override readonly name = "InferenceError";
  constructor(readonly code: ErrorCode, message: string, options?: ErrorOptions) {
    super(clipped(message, MAX_MESSAGE_CHARS), options);
  }
}

/**
 * Triton's `InferenceRequest::LogRequest()`: the start of the errors a request's own checks raise, naming the
 * request so that a client with many in flight learns which one failed. Triton writes `<id_unknown>` for a
 * request without an id; this server leaves the prefix out then (see docs/protocol.md).
 */
export function requestLogPrefix(id: string | undefined): string {
  return id === undefined || id === "" ? "" : `[request id: ${clipped(id)}] `;
}

export function invalidArg(message: string): InferenceError {
  return new InferenceError("INVALID_ARG", message);
}

/** Wraps anything thrown below the core (a backend, the file system) without losing a core error's code. */
export function asInferenceError(error: unknown, code: ErrorCode = "INTERNAL"): InferenceError {
  if (error instanceof InferenceError) return error;
  return new InferenceError(code, error instanceof Error ? error.message : String(error), { cause: error });
}

import type { ErrorCode } from "../../protocol/error-codes";

/** The one error type the core throws; the message is what the client sees. */
export class InferenceError extends Error {
  override readonly name = "InferenceError";
  constructor(readonly code: ErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

export function invalidArg(message: string): InferenceError {
  return new InferenceError("INVALID_ARG", message);
}

/** Wraps anything thrown below the core (a backend, the file system) without losing a core error's code. */
export function asInferenceError(error: unknown, code: ErrorCode = "INTERNAL"): InferenceError {
  if (error instanceof InferenceError) return error;
  return new InferenceError(code, error instanceof Error ? error.message : String(error), { cause: error });
}

import type { ErrorCode } from "../../../protocol/error-codes";

/**
 * Why a model's call to another model (`context.infer`) failed: the callee's error code and message, as a client
 * calling it would get them. A model that returns `{ error: { code: e.code, message: e.message } }` passes it on.
 */
export class ModelCallError extends Error {
  override readonly name = "ModelCallError";
  constructor(readonly code: ErrorCode, message: string, readonly model: string) {
    super(message);
  }
}

/**
 * Whether `error` is a {@link ModelCallError}, also when the model loaded another copy of this module than the
 * server's (its own node_modules): checks the name and code rather than the class.
 */
export function isModelCallError(error: unknown): error is ModelCallError {
  return error instanceof Error && error.name === "ModelCallError" && typeof (error as { code?: unknown }).code === "string";
}

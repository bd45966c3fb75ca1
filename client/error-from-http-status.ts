import {
  InferenceServerError, InternalServerError, InvalidArgumentError, NotFoundError, UnavailableError, UnsupportedError,
} from "./inference-server-error";

/**
 * Triton's HTTP status for each error code, read backwards (`HttpCodeFromError`): 400 stands for INVALID_ARG and
 * also UNKNOWN/ALREADY_EXISTS/CANCELLED, which HTTP cannot tell apart, so it maps to the most common one.
 */
export function errorFromHttpStatus(status: number, message: string): InferenceServerError {
  switch (status) {
    case 400:
    case 413:
      return new InvalidArgumentError(message, status);
    case 404:
      return new NotFoundError(message, status);
    case 405:
    case 501:
      return new UnsupportedError(message, status);
    case 500:
      return new InternalServerError(message, status);
    case 503:
      return new UnavailableError(message, status);
    default:
      return new InferenceServerError("UNKNOWN", message, status);
  }
}

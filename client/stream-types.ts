import type { InferResult } from "./infer-result";
import type { InferenceServerError } from "./inference-server-error";

/**
 * One response of a streamed request (gRPC ModelStreamInfer): a result, or the error the server sent in its place
 * (a decoupled model may send an error response and go on). The stream ends after the model's final response.
 */
export type StreamedResponse = { readonly result: InferResult } | { readonly error: InferenceServerError };

/** A generate extension response as the server wrote it: `model_name`, `model_version`, and each output by name. */
export type GenerateResponse = Readonly<Record<string, unknown>>;

/** One event of `/generate_stream`: a response, or the error event the server sent in its place. */
export type GenerateStreamEvent = { readonly response: GenerateResponse } | { readonly error: InferenceServerError };

import { move, transferableSymbol, valueSymbol } from "piscina";
import { type ErrorCode, InferenceError } from "../../core/index";
import { type DecodedInferRequest, decodeInferRequest } from "./infer-request-codec";

/** One infer body to decode off the main thread: never a raw binary body (that needs the model's metadata). */
export interface JsonDecodeTask {
  readonly body: Uint8Array;
  readonly headerLength: number | undefined;
  readonly modelName: string;
  readonly modelVersion: string | undefined;
}

/** `value`, marked so that piscina moves `buffers` with it instead of copying them. */
export function movable(value: object, buffers: readonly ArrayBufferLike[]): unknown {
  return move({ [transferableSymbol]: [...buffers], [valueSymbol]: value });
}

/** The decoded request, or the client's mistake to answer with. */
export type JsonDecodeResult =
  | { readonly decoded: DecodedInferRequest }
  | { readonly error: { readonly code: ErrorCode; readonly message: string } };

/**
 * Piscina task: parses the JSON header and turns JSON `data` into tensor bytes, as the main thread would. The
 * tensors' buffers (and the body's, which binary inputs view) move back to the caller without a copy.
 */
export default function decodeJsonRequest(task: JsonDecodeTask): unknown {
  let decoded: DecodedInferRequest;
  try {
    decoded = decodeInferRequest(task.body, task.headerLength, {
      modelName: task.modelName,
      modelVersion: task.modelVersion,
      modelInputs: () => {
        throw new Error("a raw binary body is never decoded off the main thread");
      },
    });
  } catch (error) {
    if (error instanceof InferenceError) return { error: { code: error.code, message: error.message } } satisfies JsonDecodeResult;
    throw error;
  }
  const result: JsonDecodeResult = { decoded };
  return movable(result, [...new Set(decoded.request.inputs.map((input) => input.data.buffer))]);
}

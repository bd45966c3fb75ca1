import { movable } from "../decode-pool";
import { type ErrorCode, InferenceError, type InferRequest, type TensorMetadata } from "../../core/index";
import { type GenerateModel, generateRequest } from "./generate-mapping";
import { refuseRepeatedInputs } from "./json-top-level-keys";
import { type DecodedInferRequest, decodeInferRequest } from "./infer-request-codec";
import { parseRepositoryBody } from "./repository-requests";
import { releaseMemoryNow } from "../release-memory";

/** One infer body to decode off the main thread: never a raw binary body (that needs the model's metadata). */
export interface JsonDecodeTask {
  readonly kind: "infer";
  readonly body: Uint8Array;
  readonly headerLength: number | undefined;
  readonly modelName: string;
  readonly modelVersion: string | undefined;
}

/** One generate body to map onto the model's inputs off the main thread. */
export interface GenerateDecodeTask {
  readonly kind: "generate";
  readonly body: Uint8Array;
  readonly modelName: string;
  readonly modelVersion: string | undefined;
  readonly inputs: readonly TensorMetadata[];
}


/** The client's mistake to answer with. */
interface DecodeError {
  readonly error: { readonly code: ErrorCode; readonly message: string };
}

/** The decoded request, or the client's mistake to answer with. */
export type JsonDecodeResult = { readonly decoded: DecodedInferRequest } | DecodeError;

/** The generate body as an inference request, or the client's mistake to answer with. */
export type GenerateDecodeResult = { readonly request: InferRequest } | DecodeError;

/** The generate extension's mapping of a body (Triton's GenerateRequestClass), wherever it runs. */
export function decodeGenerateBody(body: Uint8Array, model: GenerateModel, modelVersion: string | undefined): InferRequest {
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const request = generateRequest(parseRepositoryBody(bytes), model, modelVersion);
  // JSON.parse kept one value of a repeated key; Triton refuses a repeated input.
  refuseRepeatedInputs(bytes.toString("utf8"), model.inputs.map((input) => input.name), request.id);
  return request;
}

function decodeError(error: unknown): DecodeError {
  if (error instanceof InferenceError) return { error: { code: error.code, message: error.message } };
  throw error;
}

/**
 * Piscina task: parses the JSON header and turns JSON `data` into tensor bytes (or maps a generate body onto the
 * model's inputs), as the main thread would. The tensors' buffers (and the body's, which binary inputs view) move
 * back to the caller without a copy.
 */
export default function decodeJsonRequest(task: JsonDecodeTask | GenerateDecodeTask): unknown {
  let request: InferRequest;
  let result: JsonDecodeResult | GenerateDecodeResult;
  try {
    if (task.kind === "generate") {
      request = decodeGenerateBody(task.body, { name: task.modelName, inputs: task.inputs }, task.modelVersion);
      result = { request };
    } else {
      const decoded = decodeInferRequest(task.body, task.headerLength, {
        modelName: task.modelName,
        modelVersion: task.modelVersion,
        modelInputs: () => {
          throw new Error("a raw binary body is never decoded off the main thread");
        },
      });
      request = decoded.request;
      result = { decoded };
    }
  } catch (error) {
    releaseMemoryNow(task.body.buffer);
    return decodeError(error);
  }
  const buffers = new Set(request.inputs.map((input) => input.data.buffer));
  // A body no tensor views is this thread's garbage now, which its next collection (it may be long in coming on an
  // idle worker) would free: its bytes have left the budget, so its memory goes too.
  if (!buffers.has(task.body.buffer)) releaseMemoryNow(task.body.buffer);
  return movable(result, [...buffers]);
}

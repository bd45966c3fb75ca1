import type { ErrorCode } from "../../core/index";
import { InferenceError } from "../../core/index";
import type { ModelInferRequest__Output } from "../../../protocol/grpc-types/longs-as-strings/inference/ModelInferRequest";
import { movable } from "../decode-pool";
import { loadGrpcServiceDefinitions } from "./grpc-service-definitions";
import { type DecodedModelInferRequest, decodeModelInferRequest } from "./infer-request-decoder";

/** One ModelInferRequest's bytes to decode off the main thread. */
export interface GrpcDecodeTask {
  readonly message: Uint8Array;
}

/** What a handler reads of a message before its tensors: the model it names and its id. */
export interface InferRequestHeader {
  readonly model_name: string;
  readonly model_version: string;
  readonly id: string;
}

/**
 * The message's header and its tensors decoded, or why they cannot be (the decoder's error, answered once the model
 * is known to exist, as on the main thread); a message that is not a ModelInferRequest has no header.
 */
export type GrpcDecodeResult =
  | { readonly header: InferRequestHeader; readonly decoded: DecodedModelInferRequest }
  | { readonly header: InferRequestHeader | undefined; readonly error: { readonly code: ErrorCode; readonly message: string } };

let deserialize: ((bytes: Buffer) => ModelInferRequest__Output) | undefined;

/**
 * Piscina task: parses a ModelInferRequest and decodes its tensors as the main thread would, into a
 * {@link GrpcDecodeResult}. Raw tensors stay views
 * of the message, whose memory moves back with them; typed contents come back converted, each in a buffer of its own.
 */
export default function decodeModelInferMessage(task: GrpcDecodeTask): unknown {
  deserialize ??= loadGrpcServiceDefinitions().inference["ModelInfer"]!.requestDeserialize as (bytes: Buffer) => ModelInferRequest__Output;
  let message: ModelInferRequest__Output;
  try {
    message = deserialize(Buffer.from(task.message.buffer, task.message.byteOffset, task.message.byteLength));
  } catch {
    // grpc-js's own answer to a message its deserializer refuses (server-interceptors.ts, without its debug details).
    return { header: undefined, error: { code: "INTERNAL", message: "Error deserializing request" } };
  }
  const header: InferRequestHeader = { model_name: message.model_name, model_version: message.model_version, id: message.id };
  try {
    const decoded = decodeModelInferRequest(message);
    return movable({ header, decoded }, [...new Set(decoded.request.inputs.map((input) => input.data.buffer))]);
  } catch (error) {
    if (error instanceof InferenceError) return { header, error: { code: error.code, message: error.message } };
    throw error;
  }
}

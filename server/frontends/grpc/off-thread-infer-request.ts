import { InferenceError } from "../../core/index";
import type { ModelInferRequest__Output } from "../../../protocol/grpc-types/longs-as-strings/inference/ModelInferRequest";
import { DecodePool, ownedBytes } from "../decode-pool";
import { type BudgetLease, holdOrLetGo } from "../request-bytes-budget";
import { PREFIX_BYTES } from "./grpc-message-framing";
import type { DecodedModelInferRequest } from "./infer-request-decoder";
import type { GrpcDecodeResult, GrpcDecodeTask, InferRequestHeader } from "./infer-request-worker";

/**
 * ModelInfer messages at least this long are decoded on a worker thread. Parsing a message of 1M typed BYTES
 * elements (`bytes_contents`) and joining them took the main thread ~0.7 s idle and seconds on a busy machine,
 * which every health check and call waited for; a message of raw tensors parses in microseconds, and below this the
 * hand-off would cost more than it saves.
 */
export const OFF_THREAD_MESSAGE_BYTES = 1024 * 1024;

/** A ModelInfer message left undecoded by grpc-js's deserializer, for the handler to decode on a worker thread. */
export class UndecodedInferRequest {
  constructor(readonly bytes: Buffer) {}
}

/** A message decoded on a worker: its header as the message's own fields, and its tensors (or why they cannot be). */
export interface PreDecodedInferRequest extends InferRequestHeader {
  readonly decoded: DecodedModelInferRequest | InferenceError;
}

/** What the ModelInfer handler gets: a message grpc-js decoded, or one decoded on a worker. */
export type ModelInferMessage = ModelInferRequest__Output | PreDecodedInferRequest;

/** ModelInfer's deserializer: `deserialize` for a small message, the bytes as they are for a large one. */
export function offThreadDeserializer(deserialize: (bytes: Buffer) => ModelInferRequest__Output): (bytes: Buffer) => ModelInferRequest__Output | UndecodedInferRequest {
  return (bytes) => (bytes.byteLength >= OFF_THREAD_MESSAGE_BYTES ? new UndecodedInferRequest(bytes) : deserialize(bytes));
}

/** Decodes large ModelInfer messages on a small pool of worker threads (started on first use). */
export class GrpcInferRequestDecoder {
  readonly #pool = new DecodePool(__dirname, "infer-request-worker");

  /**
   * The message decoded; rejects when it is not a ModelInferRequest at all. Its bytes must not be used afterwards.
   * With a `lease` (a unary call's, which the caller releases), the message is held on it from here, while it waits
   * for a worker: messages queued for one were counted nowhere once whole, and took the process past the budget by
   * as many as were queued. A refusal there rejects with the budget's error, the message's memory given back.
   */
  async decode(message: UndecodedInferRequest, lease?: BudgetLease): Promise<PreDecodedInferRequest> {
    holdOrLetGo([message.bytes], () => lease?.holdAtLeast(message.bytes.byteLength));
    // The message's memory holds its 5-byte prefix too (grpc-message-assembler.ts): it moves with it, uncopied.
    const bytes = ownedBytes(message.bytes, PREFIX_BYTES);
    const task: GrpcDecodeTask = { message: bytes };
    const result = await this.#pool.run<GrpcDecodeResult>(task, [bytes.buffer]);
    if ("decoded" in result) return { ...result.header, decoded: result.decoded };
    const error = new InferenceError(result.error.code, result.error.message);
    if (result.header === undefined) throw error;
    return { ...result.header, decoded: error };
  }

  close(): Promise<void> {
    return this.#pool.close();
  }
}

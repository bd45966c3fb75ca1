import { InferenceError, type InferRequest } from "../../core/index";
import type { GenerateModel } from "./generate-mapping";
import { type DecodedInferRequest, decodeInferRequest, type RawBodyContext } from "./infer-request-codec";
import { DecodePool, ownedBytes } from "../decode-pool";
import { decodeGenerateBody, type GenerateDecodeResult, type GenerateDecodeTask, type JsonDecodeResult, type JsonDecodeTask } from "./json-request-worker";

/**
 * JSON headers at least this long are decoded on a worker thread. Parsing and converting JSON tensor data costs
 * the main thread about 60 ms per MB (INT64), which would stall every other request and health check for as long;
 * below this the hand-off (tens of microseconds) would cost more than it saves.
 */
export const OFF_THREAD_JSON_BYTES = 64 * 1024;

/**
 * Decodes infer and generate bodies: small ones inline, large JSON ones on a small pool of worker threads (started
 * on first use, at most half the cores), so that a 60 MB JSON tensor does not stop the event loop for seconds. The
 * body handed to {@link decode} or {@link decodeGenerate} must not be used by the caller afterwards: its memory may
 * move to the worker.
 */
export class InferRequestDecoder {
  readonly #pool = new DecodePool(__dirname, "json-request-worker");

  async decode(body: Uint8Array, headerLength: number | undefined, context: RawBodyContext): Promise<DecodedInferRequest> {
    if (headerLength === 0 || (headerLength ?? body.byteLength) < OFF_THREAD_JSON_BYTES) return decodeInferRequest(body, headerLength, context);
    const bytes = ownedBytes(body);
    const task: JsonDecodeTask = { kind: "infer", body: bytes, headerLength, modelName: context.modelName, modelVersion: context.modelVersion };
    const result = await this.#pool.run<JsonDecodeResult>(task, [bytes.buffer]);
    if ("error" in result) throw new InferenceError(result.error.code, result.error.message);
    return result.decoded;
  }

  /** A generate body (Triton's generate extension) as an inference request of `model`, with its inputs. */
  async decodeGenerate(body: Uint8Array, model: GenerateModel, modelVersion: string | undefined): Promise<InferRequest> {
    if (body.byteLength < OFF_THREAD_JSON_BYTES) return decodeGenerateBody(body, model, modelVersion);
    const bytes = ownedBytes(body);
    const task: GenerateDecodeTask = { kind: "generate", body: bytes, modelName: model.name, modelVersion, inputs: model.inputs };
    const result = await this.#pool.run<GenerateDecodeResult>(task, [bytes.buffer]);
    if ("error" in result) throw new InferenceError(result.error.code, result.error.message);
    return result.request;
  }

  close(): Promise<void> {
    return this.#pool.close();
  }
}

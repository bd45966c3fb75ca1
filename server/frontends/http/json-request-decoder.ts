import { existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Piscina } from "piscina";
import { InferenceError, type InferRequest } from "../../core/index";
import type { GenerateModel } from "./generate-mapping";
import { type DecodedInferRequest, decodeInferRequest, type RawBodyContext } from "./infer-request-codec";
import {
  decodeGenerateBody, type GenerateDecodeResult, type GenerateDecodeTask, type JsonDecodeResult, type JsonDecodeTask, movable,
} from "./json-request-worker";

/**
 * JSON headers at least this long are decoded on a worker thread. Parsing and converting JSON tensor data costs
 * the main thread about 60 ms per MB (INT64), which would stall every other request and health check for as long;
 * below this the hand-off (tens of microseconds) would cost more than it saves.
 */
export const OFF_THREAD_JSON_BYTES = 64 * 1024;

function workerEntry(): { filename: string; execArgv: string[] } {
  const compiled = path.join(__dirname, "json-request-worker.js");
  if (existsSync(compiled)) return { filename: compiled, execArgv: [] };
  // Running from TypeScript sources (tests, tsx): the worker needs the same loader.
  return { filename: path.join(__dirname, "json-request-worker.ts"), execArgv: ["--require", "tsx/cjs"] };
}

/**
 * The body's memory, whole: moved to the worker when the body owns it alone, else copied out first. The copy is a
 * Uint8Array's own: a Buffer's `slice` is a view of the same memory, and a small body's is Node's shared buffer pool,
 * which Node 21+ refuses to transfer (DataCloneError) and Node 20 would have taken from every other buffer in it.
 */
function ownedBytes(body: Uint8Array): Uint8Array {
  return body.byteOffset === 0 && body.byteLength === body.buffer.byteLength ? body : new Uint8Array(body);
}

/**
 * Decodes infer and generate bodies: small ones inline, large JSON ones on a small pool of worker threads (started
 * on first use, at most half the cores), so that a 60 MB JSON tensor does not stop the event loop for seconds. The
 * body handed to {@link decode} or {@link decodeGenerate} must not be used by the caller afterwards: its memory may
 * move to the worker.
 */
export class InferRequestDecoder {
  #pool: Piscina | undefined;

  async decode(body: Uint8Array, headerLength: number | undefined, context: RawBodyContext): Promise<DecodedInferRequest> {
    if (headerLength === 0 || (headerLength ?? body.byteLength) < OFF_THREAD_JSON_BYTES) return decodeInferRequest(body, headerLength, context);
    const bytes = ownedBytes(body);
    const task: JsonDecodeTask = { kind: "infer", body: bytes, headerLength, modelName: context.modelName, modelVersion: context.modelVersion };
    const result = await this.#run<JsonDecodeResult>(task, bytes);
    if ("error" in result) throw new InferenceError(result.error.code, result.error.message);
    return result.decoded;
  }

  /** A generate body (Triton's generate extension) as an inference request of `model`, with its inputs. */
  async decodeGenerate(body: Uint8Array, model: GenerateModel, modelVersion: string | undefined): Promise<InferRequest> {
    if (body.byteLength < OFF_THREAD_JSON_BYTES) return decodeGenerateBody(body, model, modelVersion);
    const bytes = ownedBytes(body);
    const task: GenerateDecodeTask = { kind: "generate", body: bytes, modelName: model.name, modelVersion, inputs: model.inputs };
    const result = await this.#run<GenerateDecodeResult>(task, bytes);
    if ("error" in result) throw new InferenceError(result.error.code, result.error.message);
    return result.request;
  }

  async #run<Result>(task: JsonDecodeTask | GenerateDecodeTask, bytes: Uint8Array): Promise<Result> {
    this.#pool ??= new Piscina({
      ...workerEntry(),
      minThreads: 0,
      maxThreads: Math.max(1, Math.floor(os.availableParallelism() / 2)),
      idleTimeout: 60_000,
    });
    return (await this.#pool.run(movable(task, [bytes.buffer]))) as Result;
  }

  async close(): Promise<void> {
    await this.#pool?.destroy();
  }
}

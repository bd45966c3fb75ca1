import { createHash } from "node:crypto";
import type { OutputTensor, RequestedOutput } from "./inference-request";
import type { Tensor } from "./tensor";

/**
 * Triton's local response cache (`--cache-config local,size=N`, `response_cache { enable: true }` per model): the
 * answers to recent requests, keyed by a hash of the model, its version, every input (name, datatype, shape,
 * bytes) and the outputs asked for, evicted least recently used first once their bytes exceed the size. One
 * cache serves every model, as Triton's does.
 */
/** What an entry costs beyond its tensor bytes (key, shapes, bookkeeping), so that empty answers still count. */
export const CACHE_ENTRY_OVERHEAD_BYTES = 128;

export class ResponseCache {
  readonly #maxBytes: number;
  /** Insertion order is recency order: a hit moves its entry to the end. */
  readonly #entries = new Map<string, { outputs: readonly OutputTensor[]; bytes: number }>();
  #bytes = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  static key(modelName: string, modelVersion: number, inputs: ReadonlyMap<string, Tensor>, outputs: readonly RequestedOutput[]): string {
    const hash = createHash("sha256");
    hash.update(`${modelName}\0${modelVersion}\0`);
    for (const name of [...inputs.keys()].sort()) {
      const tensor = inputs.get(name)!;
      hash.update(`${name}\0${tensor.datatype}\0${tensor.shape.join(",")}\0${tensor.data.byteLength}\0`);
      hash.update(tensor.data);
    }
    for (const output of outputs) hash.update(`${output.name}\0${output.classification ?? ""}\0`);
    return hash.digest("base64");
  }

  get(key: string): readonly OutputTensor[] | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.outputs;
  }

  /** Keeps a copy of `outputs` (they may be views on a whole batch's buffers); a response larger than the cache is not kept. */
  set(key: string, outputs: readonly OutputTensor[]): void {
    const bytes = outputs.reduce((sum, output) => sum + output.data.byteLength, CACHE_ENTRY_OVERHEAD_BYTES);
    if (bytes > this.#maxBytes || this.#entries.has(key)) return;
    for (const [oldest, entry] of this.#entries) {
      if (this.#bytes + bytes <= this.#maxBytes) break;
      this.#entries.delete(oldest);
      this.#bytes -= entry.bytes;
    }
    this.#entries.set(key, { outputs: outputs.map((output) => ({ ...output, shape: [...output.shape], data: output.data.slice() })), bytes });
    this.#bytes += bytes;
  }

  /** Bytes held, overhead included. */
  get bytes(): number {
    return this.#bytes;
  }
}

import os from "node:os";
import { move, Piscina, transferableSymbol, valueSymbol } from "piscina";
import { workerScript } from "../../common/worker-script";
import { requestBuffers } from "./request-buffers";

/** `value`, marked so that piscina moves `buffers` with it instead of copying them (shared memory is shared as it is). */
export function movable(value: object, buffers: readonly ArrayBufferLike[]): unknown {
  return move({ [transferableSymbol]: buffers.filter((buffer) => buffer instanceof ArrayBuffer), [valueSymbol]: value });
}

/**
 * `view`'s memory, to hand to a worker: its own buffer when it owns it (give or take `slack` bytes beside it that
 * belong to it too, such as a gRPC message's 5-byte prefix), a pooled body's or message's shared memory as it is,
 * else a copy. The copy is a Uint8Array's own: a Buffer's
 * `slice` is a view of the same memory, and a small one's is Node's shared buffer pool, which Node 21+ refuses to
 * transfer (DataCloneError) and Node 20 would have taken from every other buffer in it.
 */
export function ownedBytes(view: Uint8Array, slack = 0): Uint8Array {
  return requestBuffers.lends(view) || view.buffer.byteLength - view.byteLength <= slack ? view : new Uint8Array(view);
}

/**
 * A small pool of worker threads that decode large requests, so that parsing and converting tens of megabytes does
 * not stop the event loop (health checks and every other request) for as long: started on first use, at most half
 * the cores, idle threads ended after a minute. The buffers handed to {@link run} move to the worker (shared memory
 * is shared).
 */
export class DecodePool {
  readonly #directory: string;
  readonly #name: string;
  #pool: Piscina | undefined;

  /** @param name the worker module beside `directory`'s modules, without its extension; its default export is the task. */
  constructor(directory: string, name: string) {
    this.#directory = directory;
    this.#name = name;
  }

  async run<Result>(task: object, buffers: readonly ArrayBufferLike[]): Promise<Result> {
    return (await this.#started().run(movable(task, buffers))) as Result;
  }

  #started(): Piscina {
    if (this.#pool !== undefined) return this.#pool;
    const { file, execArgv } = workerScript(this.#directory, this.#name);
    this.#pool = new Piscina({ filename: file, execArgv, minThreads: 0, maxThreads: Math.max(1, Math.floor(os.availableParallelism() / 2)), idleTimeout: 60_000 });
    return this.#pool;
  }

  async close(): Promise<void> {
    await this.#pool?.destroy();
  }
}

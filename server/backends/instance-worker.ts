import { Worker, type WorkerOptions } from "node:worker_threads";
import type { BackendTensor, TensorMap } from "./backend";

/**
 * Starts a worker thread. Backends take one so that a test can hold the real Worker it started (to terminate it
 * and watch the instance be replaced); production uses {@link startWorkerThread}.
 */
export type WorkerFactory = (file: string, options: WorkerOptions) => Worker;

export const startWorkerThread: WorkerFactory = (file, options) => new Worker(file, options);

/** A tensor crossing to or from a worker thread, with its name. */
export interface NamedTensor extends BackendTensor {
  readonly name: string;
}

/**
 * Tensors to post to a worker; the buffers that can move with them instead of being copied (whole ones) are added
 * to `transfer`. A set, as a buffer listed twice fails the post, and one message may carry the tensors of several
 * requests.
 */
export function postableTensors(tensors: TensorMap, transfer: Set<ArrayBuffer>): NamedTensor[] {
  const named: NamedTensor[] = [];
  for (const [name, tensor] of tensors) {
    named.push({ name, datatype: tensor.datatype, shape: tensor.shape, data: tensor.data });
    const buffer = tensor.data.buffer;
    if (buffer instanceof ArrayBuffer && tensor.data.byteLength === buffer.byteLength) transfer.add(buffer);
  }
  return named;
}

/**
 * What an instance worker posts: once `ready` (with what it learned while loading) or `load-error`, then one
 * reply per request, carrying the request's `id`.
 */
export type StartupMessage<Ready> = { readonly type: "ready"; readonly ready: Ready } | { readonly type: "load-error"; readonly message: string };

export interface WorkerReply {
  readonly id: number;
}

/** How long a call may run, and what it fails with past that. */
export interface CallLimit {
  readonly ms: number;
  readonly message: string;
}

/** Why a call failed when its time limit ended it: the thread was terminated and the instance is lost. */
export class CallTimeoutError extends Error {}

interface PendingCall<Reply> {
  readonly id: number;
  readonly resolve: (reply: Reply) => void;
  readonly reject: (error: Error) => void;
  /** When the call's time limit ends it (ms since the epoch), and the timer that does. */
  endsAt: number;
  timer: NodeJS.Timeout | undefined;
}

/**
 * The main thread's side of one instance's worker thread: one call at a time, each answered by the reply with
 * its id. When the thread dies (an uncaught exception, `process.exit`, running out of memory, `terminate()`, a
 * call past its time limit), the call it held is rejected with the reason, later calls are refused, and
 * {@link lost} resolves, so the core can replace the instance.
 */
export class InstanceWorker<Reply extends WorkerReply> {
  readonly lost: Promise<Error>;
  readonly #worker: Worker;
  #nextId = 0;
  #pending: PendingCall<Reply> | undefined;
  #dead: Error | undefined;
  #closing = false;
  #exited: Promise<void>;
  #markLost: (reason: Error) => void = () => undefined;

  private constructor(worker: Worker) {
    this.#worker = worker;
    this.lost = new Promise((resolve) => (this.#markLost = resolve));
    this.#exited = new Promise((resolve) => worker.once("exit", () => resolve()));
    worker.on("message", (message: Reply) => this.#onReply(message));
    worker.on("error", (error: Error) => this.#die(new Error(`the instance's worker thread crashed: ${error.message}`)));
    worker.on("exit", (code: number) => this.#die(new Error(`the instance's worker thread exited with code ${code}`)));
  }

  /**
   * Starts `file` in a worker thread and resolves once it reported ready. Rejects with the worker's load error,
   * or with why it died while loading; the thread is gone then.
   */
  static start<Ready, Reply extends WorkerReply>(
    file: string, options: WorkerOptions, instanceName: string, startWorker: WorkerFactory,
  ): Promise<{ worker: InstanceWorker<Reply>; ready: Ready }> {
    const worker = startWorker(file, options);
    return new Promise((resolve, reject) => {
      const fail = (message: string): void => {
        cleanup();
        void worker.terminate();
        reject(new Error(message));
      };
      const onMessage = (message: StartupMessage<Ready>): void => {
        if (message.type === "ready") {
          cleanup();
          resolve({ worker: new InstanceWorker<Reply>(worker), ready: message.ready });
        } else if (message.type === "load-error") {
          fail(message.message);
        }
      };
      const onError = (error: Error): void => fail(`instance ${instanceName} failed to start: ${error.message}`);
      const onExit = (code: number): void => fail(`instance ${instanceName} exited with code ${code} while loading`);
      const cleanup = (): void => {
        worker.off("message", onMessage).off("error", onError).off("exit", onExit);
      };
      worker.on("message", onMessage).on("error", onError).on("exit", onExit);
    });
  }

  /**
   * Sends one request (an `id` is added) and resolves with its reply; rejects if the thread dies meanwhile. With a
   * `limit`, a call that has not answered within `limit.ms` terminates the thread (JavaScript cannot be stopped any
   * other way: a busy loop never yields) and rejects with a {@link CallTimeoutError} carrying `limit.message`.
   */
  call(request: object, transfer: readonly ArrayBuffer[] = [], limit?: CallLimit): Promise<Reply> {
    if (this.#dead !== undefined) return Promise.reject(this.#dead);
    if (this.#closing) return Promise.reject(new Error("instance is closed"));
    if (this.#pending !== undefined) return Promise.reject(new Error("instance is busy: concurrent execution is a scheduler bug"));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending = { id, resolve, reject, endsAt: Infinity, timer: undefined };
      if (limit !== undefined) this.limitPending(limit);
      this.#worker.postMessage({ ...request, id }, transfer);
    });
  }

  /** Hands `listener` every message of the worker that is not a call's reply (a decoupled model's responses, its calls to other models). */
  onMessage(listener: (message: unknown) => void): void {
    this.#worker.on("message", listener);
  }

  /** Gives the call running now (if any) at most `limit.ms` more, as {@link call}'s limit does; a nearer end stays. */
  limitPending(limit: CallLimit): void {
    const pending = this.#pending;
    if (pending === undefined || Date.now() + limit.ms >= pending.endsAt) return;
    clearTimeout(pending.timer);
    pending.endsAt = Date.now() + limit.ms;
    pending.timer = setTimeout(() => {
      if (this.#pending !== pending) return;
      this.#die(new CallTimeoutError(limit.message));
      void this.#worker.terminate();
    }, limit.ms);
  }

  /** Posts outside any call (an answer to something the thread asked); nothing once the thread is gone. */
  post(message: object, transfer: readonly ArrayBuffer[] = []): void {
    if (this.#dead === undefined) this.#worker.postMessage(message, transfer);
  }

  #onReply(message: Reply): void {
    const pending = this.#pending;
    if (pending === undefined || message.id !== pending.id) return;
    this.#pending = undefined;
    clearTimeout(pending.timer);
    pending.resolve(message);
  }

  #die(reason: Error): void {
    if (this.#dead !== undefined) return;
    this.#dead = reason;
    // `lost` first: whoever watches it (the core's pool) then learns of the death before the failed call's
    // handlers run, so the instance is never handed another request in between.
    if (!this.#closing) this.#markLost(reason);
    const pending = this.#pending;
    this.#pending = undefined;
    clearTimeout(pending?.timer);
    pending?.reject(reason);
  }

  /**
   * Ends the thread: posts `goodbye` (if given) and waits up to `graceMs` for the thread to exit by itself (a
   * TypeScript model's finalize()), then terminates it.
   */
  async close(goodbye?: { readonly message: object; readonly graceMs: number }): Promise<void> {
    if (this.#closing) return this.#exited;
    this.#closing = true;
    if (this.#dead === undefined && goodbye !== undefined) {
      this.#worker.postMessage(goodbye.message);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.#exited, new Promise<void>((resolve) => (timer = setTimeout(resolve, goodbye.graceMs)))]);
      clearTimeout(timer);
    }
    // A call still pending fails with why; `lost` stays unresolved, as the instance was closed.
    this.#die(new Error("the instance was closed (model unloaded or server shutting down) before its execution finished"));
    await this.#worker.terminate();
  }
}

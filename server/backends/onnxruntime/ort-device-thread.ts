import type { Worker } from "node:worker_threads";
import type { ModelIo } from "../backend";
import type { WorkerFactory } from "../instance-worker";
import { workerScript } from "../../../common/worker-script";
import type { DeviceThreadReply, DeviceThreadRequest, OrtSessionSettings, OrtWorkerReply, WorkerRequest } from "./ort-worker-protocol";

/**
 * How an ONNX Runtime instance reaches its session: one call at a time, each answered by the reply with its id;
 * `lost` resolves if the thread the session lives on dies. A per-instance worker (InstanceWorker) is one, and so is
 * a session on its device's shared thread ({@link DeviceSession}).
 */
export interface OrtSessionChannel {
  readonly lost: Promise<Error>;
  call(request: Omit<WorkerRequest, "id">, transfer: readonly ArrayBuffer[]): Promise<OrtWorkerReply>;
  close(): Promise<void>;
}

/** One session on a device thread; the instance's view of it. */
class DeviceSession implements OrtSessionChannel {
  readonly lost: Promise<Error>;
  #markLost: (reason: Error) => void = () => undefined;
  #nextId = 0;
  #pending: { readonly id: number; readonly resolve: (reply: OrtWorkerReply) => void; readonly reject: (error: Error) => void } | undefined;
  #closed: Promise<void> | undefined;
  #dead: Error | undefined;

  constructor(private readonly thread: OrtDeviceThread, readonly sessionId: number) {
    this.lost = new Promise((resolve) => (this.#markLost = resolve));
  }

  call(request: Omit<WorkerRequest, "id">, transfer: readonly ArrayBuffer[]): Promise<OrtWorkerReply> {
    if (this.#dead !== undefined) return Promise.reject(this.#dead);
    if (this.#closed !== undefined) return Promise.reject(new Error("instance is closed"));
    if (this.#pending !== undefined) return Promise.reject(new Error("instance is busy: concurrent execution is a scheduler bug"));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending = { id, resolve, reject };
      this.thread.post({ type: "run", sessionId: this.sessionId, request: { ...request, id } }, transfer);
    });
  }

  replied(reply: OrtWorkerReply): void {
    const pending = this.#pending;
    if (pending === undefined || pending.id !== reply.id) return;
    this.#pending = undefined;
    pending.resolve(reply);
  }

  /** The thread died: the call in progress fails with why, and (unless closing) the core learns it must replace us. */
  died(reason: Error): void {
    if (this.#dead !== undefined) return;
    this.#dead = reason;
    if (this.#closed === undefined) this.#markLost(reason);
    const pending = this.#pending;
    this.#pending = undefined;
    pending?.reject(reason);
  }

  /** Releases the session on the device thread (after its run in progress, if any); the last one ends the thread. */
  close(): Promise<void> {
    this.#closed ??= this.thread.closeSession(this).then(() => {
      this.died(new Error("the instance was closed (model unloaded or server shutting down) before its execution finished"));
    });
    return this.#closed;
  }
}

/**
 * The one worker thread that hosts every WebGPU session of a device (ort-device-worker.ts says why one). It starts
 * with its first session and ends after its last is closed; if it dies, every session on it is lost (each instance
 * is replaced by the core, on a new thread).
 */
class OrtDeviceThread {
  readonly #worker: Worker;
  readonly #sessions = new Map<number, DeviceSession>();
  readonly #opening = new Map<number, { resolve: (io: ModelIo) => void; reject: (error: Error) => void }>();
  readonly #closing = new Map<number, () => void>();
  #nextSessionId = 0;
  #dead: Error | undefined;

  constructor(startWorker: WorkerFactory, private readonly onEnd: (thread: OrtDeviceThread) => void) {
    const { file, execArgv } = workerScript(__dirname, "ort-device-worker");
    this.#worker = startWorker(file, { execArgv });
    this.#worker.on("message", (message: DeviceThreadReply) => this.#onMessage(message));
    this.#worker.on("error", (error: Error) => this.#die(new Error(`the device's worker thread crashed: ${error.message}`)));
    this.#worker.on("exit", (code: number) => this.#die(new Error(`the device's worker thread exited with code ${code}`)));
  }

  /** Creates a session on this thread; rejects with ONNX Runtime's load error (nothing is left open then). */
  open(settings: OrtSessionSettings): Promise<{ session: DeviceSession; io: ModelIo }> {
    if (this.#dead !== undefined) return Promise.reject(this.#dead);
    const session = new DeviceSession(this, this.#nextSessionId++);
    this.#sessions.set(session.sessionId, session);
    return new Promise<ModelIo>((resolve, reject) => {
      this.#opening.set(session.sessionId, { resolve, reject });
      this.post({ type: "open", sessionId: session.sessionId, settings });
    }).then((io) => ({ session, io }), (error: unknown) => {
      this.#forget(session);
      throw error;
    });
  }

  post(message: DeviceThreadRequest, transfer: readonly ArrayBuffer[] = []): void {
    if (this.#dead === undefined) this.#worker.postMessage(message, transfer);
  }

  closeSession(session: DeviceSession): Promise<void> {
    if (this.#dead !== undefined || !this.#sessions.has(session.sessionId)) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.#closing.set(session.sessionId, resolve);
      this.post({ type: "close", sessionId: session.sessionId });
    }).then(() => this.#forget(session));
  }

  #forget(session: DeviceSession): void {
    this.#sessions.delete(session.sessionId);
    if (this.#sessions.size > 0 || this.#dead !== undefined) return;
    // Ended at once, not kept idle: its sessions are all released, and a load that comes later starts a new thread.
    this.onEnd(this);
    this.#dead = new Error("the device's worker thread ended with its last session");
    void this.#worker.terminate();
  }

  #onMessage(message: DeviceThreadReply): void {
    if (message.type === "ran") {
      this.#sessions.get(message.sessionId)?.replied(message.reply);
    } else if (message.type === "closed") {
      this.#closing.get(message.sessionId)?.();
      this.#closing.delete(message.sessionId);
    } else {
      const opening = this.#opening.get(message.sessionId);
      this.#opening.delete(message.sessionId);
      if (message.type === "opened") opening?.resolve(message.io);
      else opening?.reject(new Error(message.message));
    }
  }

  #die(reason: Error): void {
    if (this.#dead !== undefined) return;
    this.#dead = reason;
    this.onEnd(this);
    for (const { reject } of this.#opening.values()) reject(reason);
    this.#opening.clear();
    for (const resolve of this.#closing.values()) resolve();
    this.#closing.clear();
    for (const session of this.#sessions.values()) session.died(reason);
  }
}

/**
 * The device threads of this process, one per device key (`webgpu:0`). Process-wide, not per backend: ONNX
 * Runtime's WebGPU context is per process, so two backends (tests, benchmarks) must share the thread too.
 */
const deviceThreads = new Map<string, OrtDeviceThread>();

/** Opens a session on the thread of `deviceKey`, starting that thread (with `startWorker`) if it has none. */
export function openOnDeviceThread(
  deviceKey: string, settings: OrtSessionSettings, startWorker: WorkerFactory,
): Promise<{ session: OrtSessionChannel; io: ModelIo }> {
  let thread = deviceThreads.get(deviceKey);
  if (thread === undefined) {
    const started = new OrtDeviceThread(startWorker, (ended) => {
      if (deviceThreads.get(deviceKey) === ended) deviceThreads.delete(deviceKey);
    });
    deviceThreads.set(deviceKey, started);
    thread = started;
  }
  return thread.open(settings);
}

/** How many device threads are running now (tests check that unloading the last session ends them). */
export function runningDeviceThreads(): number {
  return deviceThreads.size;
}

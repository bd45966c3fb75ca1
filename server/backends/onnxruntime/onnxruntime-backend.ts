import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { Worker } from "node:worker_threads";
import * as ort from "onnxruntime-node";
import type { Backend, BackendInstance, ExecutionResult, InstanceSpec, ModelIo, TensorMap } from "../backend";
import { chooseExecutionProviders, type ExecutionProviderName, webgpuUnavailable } from "./execution-providers";
import { describeSession, fromOrtTensor, ortInputProblem, toOrtTensor } from "./ort-tensors";
import { type NamedTensor, ortSessionOptions, type OrtSessionSettings, type WorkerMessage } from "./ort-worker-protocol";

const GRAPH_LEVELS: Readonly<Record<number, OrtSessionSettings["graphOptimizationLevel"]>> = {
  [-1]: "basic", 0: "all", 1: "extended", 2: "disabled",
};

function workerEntry(): { file: string; execArgv: string[] } {
  const compiled = path.join(__dirname, "ort-worker.js");
  if (existsSync(compiled)) return { file: compiled, execArgv: [] };
  // Running from TypeScript sources (tests, tsx): the worker needs the same loader.
  return { file: path.join(__dirname, "ort-worker.ts"), execArgv: ["--require", "tsx/cjs"] };
}

function booleanParameter(value: string | undefined, fallback: boolean): boolean {
  return value === undefined ? fallback : value === "1" || value.toLowerCase() === "true";
}

function integerParameter(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new Error(`model parameter ${name} must be a non-negative integer, got '${value}'`);
  return parsed;
}

/** Triton's model `parameters` for the ONNX Runtime backend, turned into session settings. */
export function sessionSettings(spec: InstanceSpec, executionProviders: OrtSessionSettings["executionProviders"]): OrtSessionSettings {
  const p = spec.parameters;
  const graphOptimizationLevel = GRAPH_LEVELS[spec.graphOptimizationLevel];
  if (graphOptimizationLevel === undefined) throw new Error(`optimization.graph.level ${spec.graphOptimizationLevel} is not one of -1, 0, 1, 2`);
  return {
    modelPath: spec.modelPath,
    executionProviders,
    intraOpNumThreads: integerParameter(p["intra_op_thread_count"], spec.intraOpThreads, "intra_op_thread_count"),
    interOpNumThreads: integerParameter(p["inter_op_thread_count"], 1, "inter_op_thread_count"),
    executionMode: p["execution_mode"] === "1" ? "parallel" : "sequential",
    graphOptimizationLevel,
    enableCpuMemArena: booleanParameter(p["enable_mem_arena"], true),
    enableMemPattern: booleanParameter(p["enable_mem_pattern"], true),
    allowSpinning: booleanParameter(p["allow_spinning"], false),
  };
}

/**
 * ONNX Runtime, one InferenceSession per model instance, normally in a worker thread of its own. Tiny CPU models
 * (a model file of at most {@link INLINE_MODEL_MAX_BYTES}) run on the calling thread instead: for them the thread
 * hand-off costs more than the inference. Such an instance moves to a worker the first time one execution takes
 * longer than {@link INLINE_EXECUTION_BUDGET_NS} three times in a row (or ten times longer once), so a model that is
 * small on disk but slow cannot keep stalling the event loop.
 */
export class OnnxruntimeBackend implements Backend {
  readonly name = "onnxruntime";
  readonly inputProblem = ortInputProblem;
  readonly usesGpu = true;
  readonly #providerLibraryDirectory: string | undefined;

  /** `providerLibraryDirectory`: where to look for the CUDA/TensorRT provider libraries (default: onnxruntime-node's). */
  constructor(options: { providerLibraryDirectory?: string } = {}) {
    this.#providerLibraryDirectory = options.providerLibraryDirectory;
  }

  async createInstance(spec: InstanceSpec): Promise<BackendInstance> {
    const choice = chooseExecutionProviders(spec, this.#providerLibraryDirectory);
    const settings = sessionSettings(spec, choice.executionProviders);
    if (spec.device === "cpu" && statSync(spec.modelPath).size <= INLINE_MODEL_MAX_BYTES) {
      return InlineOrtInstance.create(settings, () => startWorkerInstance(settings, spec.instanceName, "cpu"));
    }
    // The TensorRT EP reads its precision from the process environment when the session is created; models load
    // one at a time, so setting it around the load is race-free.
    const previous = setEnvironment(choice.environment);
    try {
      return await startWorkerInstance(settings, spec.instanceName, choice.provider);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      // The WebGPU provider fails at session creation when there is no Vulkan loader or adapter.
      if (choice.provider === "webgpu" && /webgpu|vulkan/i.test(message)) throw webgpuUnavailable(choice, message);
      throw error;
    } finally {
      setEnvironment(previous);
    }
  }
}

export const INLINE_MODEL_MAX_BYTES = 64 * 1024;
export const INLINE_EXECUTION_BUDGET_NS = 1_000_000;

/** The same message whichever thread the session ran on. */
function executionFailed(detail: string): Error {
  return new Error(`onnxruntime execution failed: ${detail}`);
}

/** A session on the main thread, for tiny models; hands itself over to a worker if an execution runs long. */
class InlineOrtInstance implements BackendInstance {
  readonly executionProvider = "cpu";
  #session: ort.InferenceSession | undefined;
  #pendingWorker: Promise<BackendInstance> | undefined;
  #overBudgetStreak = 0;
  readonly #startWorker: () => Promise<BackendInstance>;

  private constructor(session: ort.InferenceSession, readonly io: ModelIo, startWorker: () => Promise<BackendInstance>) {
    this.#session = session;
    this.#startWorker = startWorker;
  }

  static async create(settings: OrtSessionSettings, startWorker: () => Promise<BackendInstance>): Promise<InlineOrtInstance> {
    const session = await ort.InferenceSession.create(settings.modelPath, ortSessionOptions({ ...settings, executionProviders: ["cpu"] }) as ort.InferenceSession.SessionOptions);
    return new InlineOrtInstance(session, describeSession(session), startWorker);
  }

  get executionThread(): "main" | "worker" {
    return this.#session !== undefined ? "main" : "worker";
  }

  async execute(inputs: TensorMap, outputNames: readonly string[]): Promise<ExecutionResult> {
    // Once a move to a worker has begun, nothing more runs inline: the session is released when the worker is up.
    if (this.#pendingWorker !== undefined || this.#session === undefined) return this.#workerInstance().then((w) => w.execute(inputs, outputNames));
    const session = this.#session;
    const t0 = process.hrtime.bigint();
    const feeds: Record<string, ort.Tensor> = {};
    for (const [name, tensor] of inputs) feeds[name] = toOrtTensor(ort, tensor);
    const t1 = process.hrtime.bigint();
    // onnxruntime-node runs the session synchronously inside a setImmediate callback. A callback queued just before
    // it runs right before it, so the time from there to the resolution is the inference alone, without the
    // event-loop work that happened to be queued ahead (which must not count against the budget).
    let runStartNs = t1;
    setImmediate(() => (runStartNs = process.hrtime.bigint()));
    const results = await session.run(feeds, [...outputNames]).catch((error: unknown) => {
      throw executionFailed(error instanceof Error ? error.message : String(error));
    });
    const t2 = process.hrtime.bigint();
    const outputs: TensorMap = new Map();
    for (const name of outputNames) {
      const value = results[name];
      if (value === undefined) throw new Error(`the model produced no output '${name}'`);
      outputs.set(name, fromOrtTensor(value));
    }
    const t3 = process.hrtime.bigint();
    const inferNs = Number(t2 - runStartNs);
    // A loaded host can preempt one short run; a model that is really slow overruns repeatedly, or by far.
    this.#overBudgetStreak = inferNs > INLINE_EXECUTION_BUDGET_NS ? this.#overBudgetStreak + 1 : 0;
    if (this.#overBudgetStreak >= 3 || inferNs > 10 * INLINE_EXECUTION_BUDGET_NS) void this.#workerInstance();
    return { outputs, computeInputNs: Number(t1 - t0), computeInferNs: inferNs, computeOutputNs: Number(t3 - t2) };
  }

  #workerInstance(): Promise<BackendInstance> {
    this.#pendingWorker ??= this.#startWorker().then(async (worker) => {
      const session = this.#session;
      this.#session = undefined;
      await session?.release();
      return worker;
    });
    return this.#pendingWorker;
  }

  async close(): Promise<void> {
    const session = this.#session;
    this.#session = undefined;
    await session?.release();
    if (this.#pendingWorker !== undefined) await (await this.#pendingWorker).close();
  }
}

async function startWorkerInstance(settings: OrtSessionSettings, instanceName: string, provider: ExecutionProviderName): Promise<BackendInstance> {
  const { file, execArgv } = workerEntry();
  const worker = new Worker(file, { workerData: settings, execArgv });
  const io = await waitUntilReady(worker, instanceName);
  return new OrtInstance(worker, io, provider);
}

function setEnvironment(values: Readonly<Record<string, string | undefined>>): Record<string, string | undefined> {
  const previous: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(values)) {
    previous[key] = process.env[key];
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  return previous;
}

function waitUntilReady(worker: Worker, instanceName: string): Promise<ModelIo> {
  return new Promise((resolve, reject) => {
    const fail = (message: string): void => {
      cleanup();
      void worker.terminate();
      reject(new Error(message));
    };
    const onMessage = (message: WorkerMessage): void => {
      if (message.type === "ready") {
        cleanup();
        resolve(message.io);
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

class OrtInstance implements BackendInstance {
  readonly executionThread = "worker";
  #worker: Worker;
  #nextId = 0;
  #pending: { id: number; resolve: (r: ExecutionResult) => void; reject: (e: Error) => void } | undefined;
  #dead: Error | undefined;

  constructor(worker: Worker, readonly io: ModelIo, readonly executionProvider: ExecutionProviderName) {
    this.#worker = worker;
    worker.on("message", (message: WorkerMessage) => this.#onMessage(message));
    worker.on("error", (error: Error) => this.#die(new Error(`instance worker crashed: ${error.message}`)));
    worker.on("exit", (code: number) => this.#die(new Error(`instance worker exited with code ${code}`)));
  }

  execute(inputs: TensorMap, outputNames: readonly string[]): Promise<ExecutionResult> {
    if (this.#dead !== undefined) return Promise.reject(this.#dead);
    if (this.#pending !== undefined) return Promise.reject(new Error("instance is busy: concurrent execute() is a scheduler bug"));
    const id = this.#nextId++;
    const named: NamedTensor[] = [];
    const transfer: ArrayBuffer[] = [];
    for (const [name, tensor] of inputs) {
      named.push({ name, datatype: tensor.datatype, shape: tensor.shape, data: tensor.data });
      const buffer = tensor.data.buffer;
      // Only whole, exclusively owned buffers are moved; anything else is copied by structured clone.
      if (buffer instanceof ArrayBuffer && tensor.data.byteLength === buffer.byteLength && !transfer.includes(buffer)) transfer.push(buffer);
    }
    return new Promise((resolve, reject) => {
      this.#pending = { id, resolve, reject };
      this.#worker.postMessage({ id, inputs: named, outputNames }, transfer);
    });
  }

  #onMessage(message: WorkerMessage): void {
    const pending = this.#pending;
    if (pending === undefined || !("id" in message) || message.id !== pending.id) return;
    this.#pending = undefined;
    if (message.type === "run-error") {
      pending.reject(executionFailed(message.message));
    } else if (message.type === "result") {
      const outputs: TensorMap = new Map();
      for (const output of message.outputs) outputs.set(output.name, output);
      pending.resolve({
        outputs, computeInputNs: message.computeInputNs, computeInferNs: message.computeInferNs,
        computeOutputNs: message.computeOutputNs,
      });
    }
  }

  #die(error: Error): void {
    this.#dead ??= error;
    const pending = this.#pending;
    this.#pending = undefined;
    pending?.reject(error);
  }

  async close(): Promise<void> {
    this.#dead ??= new Error("instance is closed");
    await this.#worker.terminate();
  }
}

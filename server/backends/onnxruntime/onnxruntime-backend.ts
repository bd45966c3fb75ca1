import { existsSync } from "node:fs";
import path from "node:path";
import { Worker } from "node:worker_threads";
import type { Backend, BackendInstance, ExecutionResult, InstanceSpec, ModelIo, TensorMap } from "../backend";
import { chooseExecutionProviders } from "./execution-providers";
import type { NamedTensor, OrtSessionSettings, WorkerMessage } from "./ort-worker-protocol";

const GRAPH_LEVELS: Readonly<Record<number, OrtSessionSettings["graphOptimizationLevel"]>> = {
  [-1]: "basic", 0: "all", 1: "extended", 2: "disabled",
};

function workerEntry(): { file: string; execArgv: string[] } {
  const compiled = path.join(__dirname, "ort-worker.js");
  if (existsSync(compiled)) return { file: compiled, execArgv: [] };
  // Running from TypeScript sources (tests, tsx): the worker needs the same loader.
  return { file: path.join(__dirname, "ort-worker.ts"), execArgv: ["--import", "tsx"] };
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
  };
}

/** ONNX Runtime, one worker thread (and one InferenceSession) per model instance. */
export class OnnxruntimeBackend implements Backend {
  readonly name = "onnxruntime";

  async createInstance(spec: InstanceSpec): Promise<BackendInstance> {
    const providers = chooseExecutionProviders(spec);
    const settings = sessionSettings(spec, providers.executionProviders);
    const { file, execArgv } = workerEntry();
    // The TensorRT EP reads its precision from the process environment when the session is created; models load
    // one at a time, so setting it around the load is race-free.
    const previous = setEnvironment(providers.environment);
    try {
      const worker = new Worker(file, { workerData: settings, execArgv });
      const io = await waitUntilReady(worker, spec.instanceName);
      return new OrtInstance(worker, io);
    } finally {
      setEnvironment(previous);
    }
  }
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
  #worker: Worker;
  #nextId = 0;
  #pending: { id: number; resolve: (r: ExecutionResult) => void; reject: (e: Error) => void } | undefined;
  #dead: Error | undefined;

  constructor(worker: Worker, readonly io: ModelIo) {
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
      pending.reject(new Error(`onnxruntime execution failed: ${message.message}`));
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

import { statSync } from "node:fs";
import * as ort from "onnxruntime-node";
import type { Backend, BackendExecution, BackendInstance, ExecutionTimes, InstanceSpec, ModelIo, TensorMap } from "../backend";
import { batchParts, type BatchRun, concatenateParts, executeBatches, gatherInputs } from "../batch-io";
import { InstanceWorker, startWorkerThread, type WorkerFactory } from "../instance-worker";
import { SpareBuffers } from "../spare-buffers";
import { workerScript } from "../../../common/worker-script";
import { chooseExecutionProviders, type ExecutionProviderName, runsOnWebgpu, webgpuUnavailable } from "./execution-providers";
import { openOnDeviceThread, type OrtSessionChannel } from "./ort-device-thread";
import { publicOrtMessage } from "./ort-error-message";
import { describeSession, fromOrtTensor, ortInputProblem, toOrtTensor } from "./ort-tensors";
import { ortSessionOptions, type OrtSessionSettings, type OrtWorkerReply, type ThreadBatchInput } from "./ort-worker-protocol";

const GRAPH_LEVELS: Readonly<Record<number, OrtSessionSettings["graphOptimizationLevel"]>> = {
  [-1]: "basic", 0: "all", 1: "extended", 2: "disabled",
};

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
  readonly runsModelCode = false;
  readonly defaultModelFilename = "model.onnx";
  readonly platforms = ["onnxruntime_onnx"];
  readonly recognizedByModelFile = true;
  readonly requiresModelFile = true;
  readonly defaultCpuInstanceCount = 2;
  readonly #providerLibraryDirectory: string | undefined;
  readonly #startWorker: WorkerFactory;
  readonly #inlineExecutionBudgetNs: number;

  /**
   * `providerLibraryDirectory`: where to look for the CUDA/TensorRT provider libraries (default: onnxruntime-node's);
   * `startWorker` starts the instances' worker threads (tests pass one that keeps the Worker to kill it);
   * `inlineExecutionBudgetNs` is the per-execution time past which an inline instance moves to a worker (tests set
   * it far below or above any real run, so their verdict does not depend on the machine's speed).
   */
  constructor(options: {
    readonly providerLibraryDirectory?: string;
    readonly startWorker?: WorkerFactory;
    readonly inlineExecutionBudgetNs?: number;
  } = {}) {
    this.#providerLibraryDirectory = options.providerLibraryDirectory;
    this.#startWorker = options.startWorker ?? startWorkerThread;
    this.#inlineExecutionBudgetNs = options.inlineExecutionBudgetNs ?? INLINE_EXECUTION_BUDGET_NS;
  }

  firstGpuOnly(accelerators: InstanceSpec["accelerators"]): string | undefined {
    return runsOnWebgpu(accelerators, this.#providerLibraryDirectory)
      ? "onnxruntime-node's WebGPU provider takes no device id (install the CUDA provider to use every GPU)"
      : undefined;
  }

  async createInstance(spec: InstanceSpec): Promise<BackendInstance> {
    const choice = chooseExecutionProviders(spec, this.#providerLibraryDirectory);
    const settings = sessionSettings(spec, choice.executionProviders);
    const startWorker = (): Promise<BackendInstance> => choice.provider === "webgpu"
      ? OrtInstance.onDeviceThread(settings, spec.deviceId, this.#startWorker)
      : OrtInstance.start(settings, spec.instanceName, choice.provider, this.#startWorker);
    if (spec.device === "cpu" && statSync(spec.modelPath).size <= INLINE_MODEL_MAX_BYTES) {
      return InlineOrtInstance.create(settings, startWorker, this.#inlineExecutionBudgetNs).catch((error: unknown) => {
        throw loadFailed(error);
      });
    }
    // The TensorRT EP reads its precision from the process environment when the session is created; models load
    // one at a time, so setting it around the load is race-free.
    const previous = setEnvironment(choice.environment);
    try {
      return await startWorker();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      // The WebGPU provider fails at session creation when there is no Vulkan loader or adapter.
      if (choice.provider === "webgpu" && /webgpu|vulkan/i.test(message)) throw webgpuUnavailable(choice, message);
      throw loadFailed(error);
    } finally {
      setEnvironment(previous);
    }
  }
}

export const INLINE_MODEL_MAX_BYTES = 64 * 1024;
export const INLINE_EXECUTION_BUDGET_NS = 1_000_000;

/** A model load's failure, its message as a client may read it (the reason a repository request shows). */
function loadFailed(error: unknown): Error {
  return new Error(publicOrtMessage(error instanceof Error ? error.message : String(error)), { cause: error });
}

/** The same message whichever thread the session ran on. */
function executionFailed(detail: string): Error {
  return new Error(`onnxruntime execution failed: ${publicOrtMessage(detail)}`);
}

/** A session on the main thread, for tiny models; hands itself over to a worker if an execution runs long. */
class InlineOrtInstance implements BackendInstance {
  readonly executionProvider = "cpu";
  #session: ort.InferenceSession | undefined;
  #pendingWorker: Promise<BackendInstance> | undefined;
  #overBudgetStreak = 0;
  readonly #startWorker: () => Promise<BackendInstance>;
  readonly #budgetNs: number;
  /** Only the worker it may move to can die; until then this never settles. */
  readonly lost: Promise<Error>;
  #forwardLoss: (reason: Error) => void = () => undefined;

  private constructor(session: ort.InferenceSession, readonly io: ModelIo, startWorker: () => Promise<BackendInstance>, budgetNs: number) {
    this.#session = session;
    this.#startWorker = startWorker;
    this.#budgetNs = budgetNs;
    this.lost = new Promise((resolve) => (this.#forwardLoss = resolve));
  }

  static async create(settings: OrtSessionSettings, startWorker: () => Promise<BackendInstance>, budgetNs: number): Promise<InlineOrtInstance> {
    const session = await ort.InferenceSession.create(settings.modelPath, ortSessionOptions({ ...settings, executionProviders: ["cpu"] }) as ort.InferenceSession.SessionOptions);
    return new InlineOrtInstance(session, describeSession(session), startWorker, budgetNs);
  }

  get executionThread(): "main" | "worker" {
    return this.#session !== undefined ? "main" : "worker";
  }

  readonly groupsExecutions = false;

  execute(executions: readonly BackendExecution[]): Promise<readonly (ExecutionTimes | undefined)[]> {
    // Once a move to a worker has begun, nothing more runs inline: the session is released when the worker is up.
    const session = this.#session;
    if (this.#pendingWorker !== undefined || session === undefined) return this.#workerInstance().then((worker) => worker.execute(executions));
    return executeBatches(executions, gatherInputs, (inputs, outputNames) => this.#run(session, inputs, outputNames));
  }

  async #run(session: ort.InferenceSession, inputs: TensorMap, outputNames: readonly string[]): Promise<BatchRun> {
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
    this.#overBudgetStreak = inferNs > this.#budgetNs ? this.#overBudgetStreak + 1 : 0;
    if (this.#overBudgetStreak >= 3 || inferNs > 10 * this.#budgetNs) void this.#workerInstance();
    return { outputs, computeInputNs: Number(t1 - t0), computeInferNs: inferNs, computeOutputNs: Number(t3 - t2) };
  }

  #workerInstance(): Promise<BackendInstance> {
    this.#pendingWorker ??= this.#startWorker().then(async (worker) => {
      void worker.lost?.then(this.#forwardLoss);
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

function setEnvironment(values: Readonly<Record<string, string | undefined>>): Record<string, string | undefined> {
  const previous: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(values)) {
    previous[key] = process.env[key];
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  return previous;
}

/**
 * A session in a worker thread of its own (ort-worker.ts), or, for WebGPU, on the one thread its device's sessions
 * share (ort-device-thread.ts: ONNX Runtime's WebGPU context crashes the process when two threads use it at once).
 * The core replaces it if the thread dies.
 */
class OrtInstance implements BackendInstance {
  readonly executionThread = "worker";
  readonly #worker: OrtSessionChannel;
  readonly #spareBuffers = new SpareBuffers();

  /**
   * Whether the session's thread is this instance's alone, and so gathers batches from shared request memory itself.
   * A device thread does not: its sessions run one after another, synchronously, so a copy there waits in line with
   * the other instances' runs (a 32-image batch of resnet50 is ~19 MB, a few milliseconds beside a GPU run of ~30),
   * where the main thread's copy overlaps them.
   */
  readonly #threadGathers: boolean;

  private constructor(worker: OrtSessionChannel, readonly io: ModelIo, readonly executionProvider: ExecutionProviderName, threadGathers: boolean) {
    this.#worker = worker;
    this.#threadGathers = threadGathers;
  }

  static async onDeviceThread(settings: OrtSessionSettings, deviceId: number, startWorker: WorkerFactory): Promise<OrtInstance> {
    const { session, io } = await openOnDeviceThread(`webgpu:${deviceId}`, settings, startWorker);
    return new OrtInstance(session, io, "webgpu", false);
  }

  static async start(settings: OrtSessionSettings, instanceName: string, provider: ExecutionProviderName, startWorker: WorkerFactory): Promise<OrtInstance> {
    const { file, execArgv } = workerScript(__dirname, "ort-worker");
    const { worker, ready } = await InstanceWorker.start<ModelIo, OrtWorkerReply>(file, { workerData: settings, execArgv }, instanceName, startWorker);
    return new OrtInstance(worker, ready, provider, true);
  }

  get lost(): Promise<Error> {
    return this.#worker.lost;
  }

  readonly groupsExecutions = false;

  execute(executions: readonly BackendExecution[]): Promise<(ExecutionTimes | undefined)[]> {
    return executeBatches(executions, (requests) => this.#inputsForThread(requests), (inputs, outputNames) => this.#run(inputs, outputNames));
  }

  /**
   * The batch's inputs as the session's thread takes them. On a thread of the instance's own, an input whose every
   * part lies in memory both threads share (request bodies and messages from frontends/request-buffers.ts) crosses
   * as those parts, and the thread gathers it: at GPU rates the batch's copy was a tenth of the main thread's time
   * per request. Any other input is gathered here into this instance's spare buffers, which move with the call
   * whole (the views on them keep their lengths).
   */
  async #inputsForThread(requests: BackendExecution): Promise<{ inputs: ThreadBatchInput[]; transfer: ArrayBuffer[] }> {
    const inputs: ThreadBatchInput[] = [];
    const transfer: ArrayBuffer[] = [];
    for (const [name, { datatype, shape, parts }] of batchParts(requests)) {
      if (this.#threadGathers && parts.every((part) => part.buffer instanceof SharedArrayBuffer)) {
        inputs.push({ name, datatype, shape, parts });
        continue;
      }
      const data = await concatenateParts(parts, (byteLength) => this.#spareBuffers.take(byteLength));
      transfer.push(data.buffer);
      inputs.push({ name, datatype, shape, parts: [data] });
    }
    return { inputs, transfer };
  }

  async #run({ inputs, transfer }: { inputs: ThreadBatchInput[]; transfer: ArrayBuffer[] }, outputNames: readonly string[]): Promise<BatchRun> {
    const reply = await this.#worker.call({ inputs, outputNames }, transfer);
    this.#spareBuffers.give(reply.inputBuffers);
    if (reply.type === "run-error") throw executionFailed(reply.message);
    const outputs: TensorMap = new Map();
    for (const output of reply.outputs) outputs.set(output.name, output);
    return { outputs, computeInputNs: reply.computeInputNs, computeInferNs: reply.computeInferNs, computeOutputNs: reply.computeOutputNs };
  }

  close(): Promise<void> {
    return this.#worker.close();
  }
}

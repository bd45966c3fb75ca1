import { existsSync } from "node:fs";
import path from "node:path";
import type { ResourceLimits } from "node:worker_threads";
import type { Backend, BackendExecution, BackendInstance, ExecutionTimes, InstanceSpec } from "../backend";
import { failExecution, gatherInputs } from "../batch-io";
import { CallTimeoutError, InstanceWorker, postableTensors, startWorkerThread, type WorkerFactory } from "../instance-worker";
import { workerScript } from "../../../common/worker-script";
import { isModelCallMessage } from "./model-call-protocol";
import { ModelCallRelay } from "./model-call-relay";
import type { InitializeArgs, ModelConfigJson } from "./typescript-model";
import { OpenStreams, toBackendResponse } from "./open-streams";
import type { StreamResponseMessage, TypeScriptWorkerData, TypeScriptWorkerReply, WireRequest } from "./typescript-worker-protocol";

/**
 * Model parameter capping an instance's JS heap (V8 old generation), in MiB: beyond it the worker dies and
 * restarts. Without it, {@link DEFAULT_MAX_HEAP_MB}: V8's own default (a share of the host's memory, ~4 GiB here)
 * would let one model take the host down. ArrayBuffers (typed arrays, Buffers, tensors) live outside that heap and
 * Node has no per-thread cap for them; the young generation and the stack keep V8's defaults.
 */
const MAX_HEAP_PARAMETER = "max_heap_size_mb";
const DEFAULT_MAX_HEAP_MB = 1024;

/** Model parameter: the longest one execute() may run, in ms (none by default); past it the instance restarts. */
const EXECUTION_TIMEOUT_PARAMETER = "execution_timeout_ms";

/**
 * Model parameter: how long an execute() still running may take once the model unloads (unload, reload, server
 * shutdown), in ms, before its worker thread is terminated; also how long finalize() may take.
 */
const UNLOAD_TIMEOUT_PARAMETER = "unload_timeout_ms";
const DEFAULT_UNLOAD_TIMEOUT_MS = 5000;

function positiveInteger(spec: InstanceSpec, parameter: string): number | undefined {
  const value = spec.parameters[parameter];
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isSafeInteger(number) || number < 1) throw new Error(`model parameter ${parameter} must be a positive integer, got '${value}'`);
  return number;
}

function resourceLimits(spec: InstanceSpec): ResourceLimits {
  return { maxOldGenerationSizeMb: positiveInteger(spec, MAX_HEAP_PARAMETER) ?? DEFAULT_MAX_HEAP_MB };
}

/** Whether the config makes the model decoupled (`model_transaction_policy { decoupled: true }`): its requests answer through streams. */
function isDecoupled(spec: InstanceSpec): boolean {
  const policy = spec.modelConfig["model_transaction_policy"];
  return typeof policy === "object" && policy !== null && (policy as { decoupled?: unknown }).decoupled === true;
}

interface InstanceTimeouts {
  readonly executionMs: number | undefined;
  readonly unloadMs: number;
}

function initializeArgs(spec: InstanceSpec): InitializeArgs {
  return {
    modelConfig: spec.modelConfig as ModelConfigJson, modelName: spec.modelName, modelVersion: spec.modelVersion,
    modelDirectory: path.resolve(spec.modelDirectory), versionDirectory: path.dirname(path.resolve(spec.modelPath)), instanceName: spec.instanceName,
    instanceKind: spec.device === "gpu" ? "KIND_GPU" : "KIND_CPU", deviceId: spec.deviceId,
  };
}

/**
 * `backend: "typescript"`: models written in TypeScript against the contract in ./typescript-model.ts, one
 * instance per worker thread (./typescript-worker.ts). Batches reach the model request by request, so each
 * request can fail on its own; the scheduler, statistics and metrics are the core's, as for any backend.
 */
export class TypeScriptBackend implements Backend {
  readonly name = "typescript";
  readonly usesGpu = false;
  readonly runsModelCode = true;
  readonly servesDecoupled = true;
  readonly defaultModelFilename = "model.js";
  readonly #startWorker: WorkerFactory;

  constructor(options: { readonly startWorker?: WorkerFactory } = {}) {
    this.#startWorker = options.startWorker ?? startWorkerThread;
  }

  async createInstance(spec: InstanceSpec): Promise<BackendInstance> {
    if (!existsSync(spec.modelPath)) {
      throw new Error(`model file ${spec.modelPath} not found (compile the model's model.ts to ${path.basename(spec.modelPath)} in its version folder)`);
    }
    // Absolute: a relative path would make require() look the model up as a package.
    const workerData: TypeScriptWorkerData = { modelPath: path.resolve(spec.modelPath), initializeArgs: initializeArgs(spec) };
    const { file, execArgv } = workerScript(__dirname, "typescript-worker");
    const timeouts: InstanceTimeouts = {
      executionMs: positiveInteger(spec, EXECUTION_TIMEOUT_PARAMETER), unloadMs: positiveInteger(spec, UNLOAD_TIMEOUT_PARAMETER) ?? DEFAULT_UNLOAD_TIMEOUT_MS,
    };
    const { worker } = await InstanceWorker.start<null, TypeScriptWorkerReply>(
      file, { workerData, execArgv, resourceLimits: resourceLimits(spec) }, spec.instanceName, this.#startWorker,
    );
    return new TypeScriptInstance(worker, timeouts, isDecoupled(spec));
  }
}

/** The streams of an execution's requests (a decoupled model's). */
function streamIds(execution: readonly WireRequest[]): number[] {
  return execution.flatMap((request) => (request.stream === undefined ? [] : [request.stream.id]));
}

class TypeScriptInstance implements BackendInstance {
  readonly io = undefined;
  readonly executionThread = "worker";
  readonly executionProvider = "cpu";
  readonly #worker: InstanceWorker<TypeScriptWorkerReply>;
  readonly #timeouts: InstanceTimeouts;
  readonly #decoupled: boolean;
  readonly #modelCalls: ModelCallRelay;
  #draining = false;
  readonly #streams = new OpenStreams();
  /**
   * Several executions go to the worker in one message, which runs them in order. Not with an execution timeout:
   * its timer covers one execution, so each goes on its own. While the model unloads, a group gets
   * unload_timeout_ms as a whole.
   */
  readonly groupsExecutions: boolean;

  constructor(worker: InstanceWorker<TypeScriptWorkerReply>, timeouts: InstanceTimeouts, decoupled: boolean) {
    this.#worker = worker;
    this.#timeouts = timeouts;
    this.#decoupled = decoupled;
    this.groupsExecutions = timeouts.executionMs === undefined;
    this.#modelCalls = new ModelCallRelay((answer, transfer) => worker.post(answer, transfer));
    worker.onMessage((message) => {
      if (isModelCallMessage(message)) this.#modelCalls.relay(message);
      else if ((message as { type?: unknown }).type === "stream-response") this.#streams.received(message as StreamResponseMessage);
    });
    void worker.lost.then((reason) => this.#streams.fail({ code: "INTERNAL", message: reason.message }));
  }

  get lost(): Promise<Error> {
    return this.#worker.lost;
  }

  /** The model is unloading: what runs now, and every later execution, gets at most unload_timeout_ms. */
  draining(): void {
    this.#draining = true;
    this.#worker.limitPending(this.#unloadLimit());
  }

  #unloadLimit(): { ms: number; message: string } {
    const ms = this.#timeouts.unloadMs;
    return { ms, message: `TypeScript model execute() was still running ${ms} ms after the model began to unload (${UNLOAD_TIMEOUT_PARAMETER}): its worker thread was terminated` };
  }

  #executionLimit(): { ms: number; message: string } | undefined {
    const ms = this.#timeouts.executionMs;
    const execution = ms === undefined ? undefined : { ms, message: `TypeScript model execute() did not finish within ${ms} ms (${EXECUTION_TIMEOUT_PARAMETER}): its instance is restarted` };
    if (!this.#draining) return execution;
    const unload = this.#unloadLimit();
    return execution !== undefined && execution.ms <= unload.ms ? execution : unload;
  }

  async execute(executions: readonly BackendExecution[]): Promise<(ExecutionTimes | undefined)[]> {
    const startNs = process.hrtime.bigint();
    const transfer = new Set<ArrayBuffer>();
    const wire = await this.#wireExecutions(executions, transfer);
    const gatheredNs = process.hrtime.bigint();
    let reply: TypeScriptWorkerReply;
    this.#modelCalls.begin(executions.flat());
    try {
      reply = await this.#worker.call({ type: "execute", executions: wire }, [...transfer], this.#executionLimit());
    } catch (error) {
      // UNAVAILABLE, as Triton answers a request its timeout ended: the server cannot serve it now (the instance
      // restarts, or the model is going away), rather than the request being malformed or the server broken.
      const timedOut = error instanceof CallTimeoutError;
      this.#streams.fail({ code: timedOut ? "UNAVAILABLE" : "INTERNAL", message: (error as Error).message }, wire.flatMap(streamIds));
      if (!timedOut) throw error;
      const endNs = process.hrtime.bigint();
      return executions.map((requests) => {
        failExecution(requests, { code: "UNAVAILABLE", message: error.message });
        return { startNs, endNs, computeInputNs: 0, computeInferNs: 0, computeOutputNs: 0 };
      });
    } finally {
      this.#modelCalls.end();
    }
    return reply.results.map((result, i) => {
      const requests = executions[i]!;
      if (result.type === "execute-error") {
        this.#streams.fail({ code: "INTERNAL", message: result.message }, streamIds(wire[i]!));
        return failExecution(requests, { code: "INTERNAL", message: result.message });
      }
      result.responses.forEach((response, j) => requests[j]!.responder.send(toBackendResponse(response), true));
      // The first execution began with the call, its inputs gathered here; the others when the worker took them up.
      return {
        startNs: i === 0 ? startNs : result.startNs, endNs: result.endNs,
        computeInputNs: (i === 0 ? Number(gatheredNs - startNs) : 0) + result.computeInputNs,
        computeInferNs: result.computeInferNs, computeOutputNs: result.computeOutputNs,
      };
    });
  }

  /**
   * The executions as the worker takes them: each request's inputs in buffers of their own, moved to its thread
   * (the model sees each request apart, so nothing is concatenated); a decoupled model's requests with their streams.
   */
  async #wireExecutions(executions: readonly BackendExecution[], transfer: Set<ArrayBuffer>): Promise<WireRequest[][]> {
    const wire: WireRequest[][] = [];
    for (const requests of executions) {
      const execution: WireRequest[] = [];
      for (const request of requests) {
        execution.push({
          inputs: postableTensors(await gatherInputs([request]), transfer), parameters: request.parameters, requestedOutputs: request.requestedOutputs,
          stream: this.#decoupled ? this.#streams.open(request.responder) : undefined,
        });
      }
      wire.push(execution);
    }
    return wire;
  }

  async close(): Promise<void> {
    await this.#worker.close({ message: { type: "finalize" }, graceMs: this.#timeouts.unloadMs });
    this.#streams.fail({ code: "UNAVAILABLE", message: "the model's instance was closed (model unloaded or server shutting down) before the stream's final response" });
  }
}

import { existsSync } from "node:fs";
import path from "node:path";
import type { ResourceLimits } from "node:worker_threads";
import type {
  Backend, BackendInstance, BackendRequest, BackendResponse, ExecutionResult, InstanceSpec, RequestsExecutionResult, TensorMap,
} from "../backend";
import { InstanceWorker, postableTensors, startWorkerThread, type WorkerFactory, workerScript } from "../instance-worker";
import type { InitializeArgs, ModelConfigJson } from "./typescript-model";
import type { TypeScriptWorkerData, TypeScriptWorkerReply, WireRequest, WireResponse } from "./typescript-worker-protocol";

/** How long finalize() may take when an instance closes before its thread is terminated. */
const FINALIZE_GRACE_MS = 5000;

/** Model parameter capping an instance's JS heap (V8 old generation), in MiB: beyond it the worker dies and restarts. */
const MAX_HEAP_PARAMETER = "max_heap_size_mb";

function resourceLimits(spec: InstanceSpec): ResourceLimits | undefined {
  const value = spec.parameters[MAX_HEAP_PARAMETER];
  if (value === undefined) return undefined;
  const megabytes = Number(value);
  if (!Number.isInteger(megabytes) || megabytes < 1) throw new Error(`model parameter ${MAX_HEAP_PARAMETER} must be a positive integer, got '${value}'`);
  return { maxOldGenerationSizeMb: megabytes };
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
    const limits = resourceLimits(spec);
    const { worker } = await InstanceWorker.start<null, TypeScriptWorkerReply>(
      file, { workerData, execArgv, ...(limits !== undefined ? { resourceLimits: limits } : {}) }, spec.instanceName, this.#startWorker,
    );
    return new TypeScriptInstance(worker);
  }
}

function toBackendResponse(response: WireResponse): BackendResponse {
  if ("error" in response) return response;
  return { outputs: new Map(response.outputs.map(({ name, ...tensor }) => [name, tensor])) };
}

class TypeScriptInstance implements BackendInstance {
  readonly io = undefined;
  readonly executionThread = "worker";
  readonly executionProvider = "cpu";
  readonly #worker: InstanceWorker<TypeScriptWorkerReply>;

  constructor(worker: InstanceWorker<TypeScriptWorkerReply>) {
    this.#worker = worker;
  }

  get lost(): Promise<Error> {
    return this.#worker.lost;
  }

  async executeRequests(requests: readonly BackendRequest[]): Promise<RequestsExecutionResult> {
    const transfer = new Set<ArrayBuffer>();
    const wire = requests.map((request): WireRequest => ({
      inputs: postableTensors(request.inputs, transfer), parameters: request.parameters, requestedOutputs: request.requestedOutputs,
    }));
    const reply = await this.#worker.call({ type: "execute", requests: wire }, [...transfer]);
    if (reply.type === "execute-error") throw new Error(reply.message);
    return {
      responses: reply.responses.map(toBackendResponse),
      computeInputNs: reply.computeInputNs, computeInferNs: reply.computeInferNs, computeOutputNs: reply.computeOutputNs,
    };
  }

  /** One request without parameters (model warmup): its outputs, or its error thrown. */
  async execute(inputs: TensorMap, outputNames: readonly string[]): Promise<ExecutionResult> {
    const result = await this.executeRequests([{ inputs, parameters: {}, requestedOutputs: outputNames }]);
    const response = result.responses[0]!;
    if ("error" in response) throw new Error(response.error.message);
    return { outputs: response.outputs, computeInputNs: result.computeInputNs, computeInferNs: result.computeInferNs, computeOutputNs: result.computeOutputNs };
  }

  close(): Promise<void> {
    return this.#worker.close({ message: { type: "finalize" }, graceMs: FINALIZE_GRACE_MS });
  }
}

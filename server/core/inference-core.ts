import { classify } from "./request/classification";
import type { CoreObserver, FailureReason, ModelGauges, RequestOutcome } from "./core-observer";
import { asInferenceError, InferenceError, invalidArg } from "./errors";
import type { InferRequest, InferResponse, OutputTensor, ParameterValue } from "./request/inference-request";
import type { LoadOverrides } from "./repository/load-overrides";
import { modelConfigToJson } from "./model-config/config-json";
import { fullShape } from "./model-config/model-signature";
import type { DataType } from "../../protocol/datatypes";
import { ModelRepositoryManager, type RepositorySettings } from "./repository/model-repository-manager";
import type { ModelStatisticsSnapshot } from "./repository/model-statistics";
import type { ModelIndexEntry, ModelVersion } from "./repository/model-version";
import { DEFAULT_REQUEST_LIMITS, type RequestLimits, validateRequest } from "./request/request-validation";
import { ResponseCache } from "./request/response-cache";
import { deliverEvent, ResponseStream, type StreamListener } from "./request/response-stream";
import { ensembleDependencies } from "./scheduling/ensemble";
import { ModelCalls } from "./scheduling/model-calls";

export interface CoreSettings extends RepositorySettings {
  /** Server name in metadata (Triton's `--id`). */
  readonly serverName: string;
  readonly serverVersion: string;
  /** Triton's `--strict-readiness`: ready only when every model is READY. */
  readonly strictReadiness: boolean;
  /** Triton's `--cache-config local,size=N`: bytes of the response cache; undefined = no cache. */
  readonly responseCacheBytes: number | undefined;
  /** Bounds on what one request may hold beyond the transport's size limits; defaults to DEFAULT_REQUEST_LIMITS. */
  readonly requestLimits?: RequestLimits;
  /** How deeply model calls (BLS) may nest; defaults to DEFAULT_MAX_CALL_DEPTH. */
  readonly maxModelCallDepth?: number;
}

export interface ModelMetadata {
  readonly name: string;
  readonly versions: string[];
  readonly platform: string;
  readonly inputs: { name: string; datatype: string; shape: number[] }[];
  readonly outputs: { name: string; datatype: string; shape: number[] }[];
}

/** A model's inputs as its config declares them, for a raw binary request (the whole body is the one input). */
export interface ModelInputs {
  readonly name: string;
  readonly batching: boolean;
  /** `dims` without the batch dimension. */
  readonly inputs: readonly { readonly name: string; readonly datatype: DataType; readonly dims: readonly number[] }[];
}

// Triton's list and order (core src/server.cc, InferenceServer::InferenceServer), less `cuda_shared_memory`: CUDA
// shared memory cannot be registered here.
export const SERVER_EXTENSIONS = [
  "classification", "sequence", "model_repository", "model_repository(unload_dependents)", "schedule_policy",
  "model_configuration", "system_shared_memory", "binary_tensor_data", "parameters", "statistics", "trace", "logging",
] as const;

function integerParameter(parameters: InferRequest["parameters"], key: string): number | undefined {
  const value: ParameterValue | undefined = parameters?.[key];
  if (value === undefined) return undefined;
  const number = typeof value === "bigint" ? Number(value) : value;
  if (typeof number !== "number" || !Number.isSafeInteger(number) || number < 0) {
    throw invalidArg(`request parameter '${key}' must be a non-negative integer, got ${JSON.stringify(String(value))}`);
  }
  return number;
}

function failureReasonOf(error: InferenceError): FailureReason {
  if (error.code === "CANCELLED") return "CANCELED";
  if (error.code === "UNAVAILABLE") return "REJECTED";
  if (error.code === "INTERNAL") return "BACKEND";
  return "OTHER";
}

/**
 * The core facade (Triton's InferenceServer): the only thing frontends and metrics talk to. Leaves the model
 * lifecycle to its {@link ModelRepositoryManager}; validates and schedules requests on the versions it
 * resolves, applies the classification extension and the response cache, and reports to its observers. Every
 * error it throws is an {@link InferenceError} with a message meant for the client.
 */
export class InferenceCore {
  readonly #settings: CoreSettings;
  readonly #repository: ModelRepositoryManager;
  readonly #observers: CoreObserver[] = [];
  readonly #responseCache: ResponseCache | undefined;
  #shuttingDown = false;
  readonly #requestLimits: RequestLimits;

  constructor(settings: CoreSettings) {
    this.#settings = settings;
    this.#requestLimits = settings.requestLimits ?? DEFAULT_REQUEST_LIMITS;
    this.#responseCache = settings.responseCacheBytes === undefined ? undefined : new ResponseCache(settings.responseCacheBytes);
    this.#repository = new ModelRepositoryManager(settings, {
      observer: {
        executed: (modelName, version, timings) => {
          if (this.#observers.length === 0) return;
          const outcome = { modelName, modelVersion: String(version), ...timings };
          for (const o of this.#observers) o.executionCompleted(outcome);
        },
      },
      composing: {
        signatureOf: (name, version) => this.#resolve(name, version < 0 ? undefined : String(version)).signature,
        infer: (request) => this.infer(request),
      },
      modelCalls: new ModelCalls({
        callee: (name, version) => {
          const model = this.#resolve(name, version);
          return {
            modelName: model.name, modelVersion: model.version, instanceCount: model.placements.length, sharesOutputs: this.#cacheFor(model) !== undefined,
            decoupled: model.config.model_transaction_policy?.decoupled === true,
          };
        },
        infer: (request) => this.infer(request),
        inferStream: (request, listener) => this.inferStream(request, listener),
      }, settings.maxModelCallDepth),
    });
  }

  observe(observer: CoreObserver): void {
    this.#observers.push(observer);
  }

  /** Scans the repositories and loads the models the control mode asks for. Rejects only under exit-on-error. */
  async start(): Promise<void> {
    await this.#repository.start();
  }

  /**
   * Repository extension: (re)load a model, only in explicit model control mode, from the repository or from
   * `overrides` (Triton's `config` and `file:` load parameters); see {@link ModelRepositoryManager.loadModel}.
   */
  async loadModel(name: string, overrides?: LoadOverrides): Promise<void> {
    await this.#repository.loadModel(name, overrides);
  }

  /** Repository extension: unload a model, and with `unloadDependents` the step models loaded along with it. */
  async unloadModel(name: string, unloadDependents = false): Promise<void> {
    await this.#repository.unloadModel(name, unloadDependents);
  }

  isLive(): boolean {
    return !this.#shuttingDown;
  }

  /** Why the model repositories could not be read at start, under `--exit-on-error false`; the server is not ready. */
  get initializationFailure(): string | undefined {
    return this.#repository.initializationFailure;
  }

  isReady(): boolean {
    if (this.#shuttingDown || this.initializationFailure !== undefined) return false;
    if (!this.#settings.strictReadiness) return true;
    // As in Triton, models never loaded (explicit mode) or unloaded do not count against readiness.
    return this.#repository.loadedIndex().every((e) => e.state === "READY");
  }

  /** Throws NOT_FOUND / UNAVAILABLE as infer() would, so frontends can refuse before decoding a body. */
  checkModelAvailable(name: string, version?: string): void {
    this.#resolve(name, version);
  }

  serverMetadata(): { name: string; version: string; extensions: string[] } {
    return { name: this.#settings.serverName, version: this.#settings.serverVersion, extensions: [...SERVER_EXTENSIONS] };
  }

  repositoryIndex(readyOnly: boolean): ModelIndexEntry[] {
    return this.#repository.index(readyOnly);
  }

  #resolve(name: string, version: string | undefined): ModelVersion {
    return this.#repository.resolve(name, version);
  }

  modelReady(name: string, version?: string): boolean {
    try {
      this.#resolve(name, version);
      return !this.#shuttingDown;
    } catch {
      return false;
    }
  }

  modelMetadata(name: string, version?: string): ModelMetadata {
    const model = this.#resolve(name, version);
    const versions = version ? [version] : this.#repository.servingVersions(name).map((v) => String(v.version));
    const describe = (tensors: typeof model.signature.inputs): ModelMetadata["inputs"] =>
      tensors.map((t) => ({ name: t.name, datatype: t.datatype, shape: fullShape(model.signature, t) }));
    return {
      name, versions, platform: model.config.platform || model.config.backend,
      inputs: describe(model.signature.inputs), outputs: describe(model.signature.outputs),
    };
  }

  modelInputs(name: string, version?: string): ModelInputs {
    const { signature } = this.#resolve(name, version);
    return { name, batching: signature.maxBatchSize > 0, inputs: signature.inputs.map((t) => ({ name: t.name, datatype: t.datatype, dims: t.dims })) };
  }

  modelConfig(name: string, version?: string): Record<string, unknown> {
    return modelConfigToJson(this.#resolve(name, version).config);
  }

  /** Statistics extension: all loaded versions, one model's, or one version's. */
  statistics(name?: string, version?: string): ModelStatisticsSnapshot[] {
    if (name === undefined || name === "") return this.#repository.allServingVersions().map((v) => v.statistics.snapshot());
    if (version !== undefined && version !== "") return [this.#resolve(name, version).statistics.snapshot()];
    this.#resolve(name, undefined);
    return this.#repository.servingVersions(name).map((v) => v.statistics.snapshot());
  }

  /** Every step of every serving ensemble: `model` runs as a step of `ensemble` (read from the parsed configs, per scrape). */
  ensembleSteps(): { ensemble: string; model: string }[] {
    return this.#repository.allServingVersions().flatMap((loaded) => ensembleDependencies(loaded.config).map((model) => ({ ensemble: loaded.name, model })));
  }

  modelGauges(): ModelGauges[] {
    return this.#repository.allServingVersions().map((loaded) => ({
      modelName: loaded.name, modelVersion: String(loaded.version), pendingRequests: loaded.scheduler.pendingCount,
      queueDepth: loaded.scheduler.queueDepth, instanceCount: loaded.pool.size, instanceBusySeconds: loaded.pool.busySeconds(),
      placements: loaded.placements,
      instanceRestarts: loaded.pool.restartCount,
    }));
  }

  /** Whether the model answers a request with any number of responses (`model_transaction_policy { decoupled: true }`). */
  isDecoupled(name: string, version?: string): boolean {
    return this.#resolve(name, version).config.model_transaction_policy?.decoupled === true;
  }

  /**
   * Runs a request and hands its responses to `listener` as they come, the last one marked final (Triton's response
   * callback with TRITONSERVER_RESPONSE_COMPLETE_FINAL): a decoupled model's zero or more responses, then the final
   * flag; any other model's one response, final. A failure is an error response, final. `request.signal` cancels
   * this request: the model sees it cancelled and its later responses are dropped. Resolves once the final
   * response was handed over; never rejects.
   */
  inferStream(request: InferRequest, listener: StreamListener): Promise<void> {
    return new Promise<void>((resolve) => {
      const deliver: StreamListener = (event) => {
        try {
          listener(event);
        } finally {
          if (event.final) resolve();
        }
      };
      const fail = (error: unknown): void => void deliverEvent(deliver, { response: asInferenceError(error), final: true });
      let model: ModelVersion;
      try {
        model = this.#resolve(request.modelName, request.modelVersion);
      } catch (error) {
        fail(error);
        return;
      }
      if (model.config.model_transaction_policy?.decoupled !== true) {
        this.infer(request).then((response) => void deliverEvent(deliver, { response, final: true }), fail);
        return;
      }
      this.#runDecoupled(model, request, deliver);
    });
  }

  #runDecoupled(model: ModelVersion, request: InferRequest, listener: StreamListener): void {
    const startNs = process.hrtime.bigint();
    request.trace?.model(model.name, model.version, request.id);
    request.trace?.timestamp("REQUEST_START", startNs);
    let queueNs = 0;
    let requested: readonly { name: string; classification?: number }[] = [];
    const responseOf = (outputs: OutputTensor[]): InferResponse =>
      ({ modelName: model.name, modelVersion: String(model.version), id: request.id, outputs: this.#selectOutputs(model, requested, outputs) });
    const stream = new ResponseStream(listener, responseOf, request.signal, (error) => {
      const endNs = process.hrtime.bigint();
      request.trace?.timestamp("REQUEST_END", endNs);
      const requestNs = Number(endNs - startNs);
      if (error === undefined) model.statistics.recordSuccess(requestNs, queueNs);
      else model.statistics.recordFailure(requestNs);
      this.#report(model, error === undefined ? undefined : failureReasonOf(error), requestNs, queueNs);
    });
    if (stream.ended) return;
    try {
      if (this.#shuttingDown) throw new InferenceError("UNAVAILABLE", "Server is shutting down");
      const validated = validateRequest(request, model.signature, this.#requestLimits);
      requested = validated.outputs;
      const options = {
        priority: integerParameter(request.parameters, "priority"), timeoutUs: integerParameter(request.parameters, "timeout"),
        signal: stream.signal, parameters: request.parameters, trace: request.trace, sink: stream, chain: request.chain,
      };
      model.scheduler.enqueue(validated, options).then((result) => (queueNs = result.queueNs), (error: unknown) => stream.fail(asInferenceError(error)));
    } catch (error) {
      stream.fail(asInferenceError(error));
    }
  }

  async infer(request: InferRequest): Promise<InferResponse> {
    const startNs = process.hrtime.bigint();
    const model = this.#resolve(request.modelName, request.modelVersion);
    if (model.config.model_transaction_policy?.decoupled === true) {
      throw new InferenceError("UNSUPPORTED", `model '${model.name}' is decoupled (model_transaction_policy { decoupled: true }): its responses can only be streamed`);
    }
    const trace = request.trace;
    if (trace !== undefined) {
      trace.model(model.name, model.version, request.id);
      trace.timestamp("REQUEST_START", startNs);
    }
    try {
      if (this.#shuttingDown) throw new InferenceError("UNAVAILABLE", "Server is shutting down");
      const validated = validateRequest(request, model.signature, this.#requestLimits);
      const options = {
        priority: integerParameter(request.parameters, "priority"),
        timeoutUs: integerParameter(request.parameters, "timeout"),
        signal: request.signal,
        parameters: request.parameters,
        trace,
        chain: request.chain,
      };
      const cache = this.#cacheFor(model);
      let cacheKey = "";
      let lookupNs = 0;
      if (cache !== undefined) {
        const lookupStartNs = process.hrtime.bigint();
        cacheKey = ResponseCache.key(model.name, model.version, validated.inputs, validated.outputs);
        const hit = cache.get(cacheKey);
        lookupNs = Number(process.hrtime.bigint() - lookupStartNs);
        if (hit !== undefined) {
          model.statistics.recordCacheHit(lookupNs);
          return this.#succeed(model, request, hit, startNs, 0, { hit: true, ns: lookupNs });
        }
      }
      const { outputs, queueNs } = await model.scheduler.enqueue(validated, options);
      const selected = this.#selectOutputs(model, validated.outputs, outputs);
      let cacheOutcome: RequestOutcome["cache"];
      if (cache !== undefined) {
        const insertStartNs = process.hrtime.bigint();
        cache.set(cacheKey, selected);
        cacheOutcome = { hit: false, ns: lookupNs + Number(process.hrtime.bigint() - insertStartNs) };
        model.statistics.recordCacheMiss(cacheOutcome.ns);
      }
      return this.#succeed(model, request, selected, startNs, queueNs, cacheOutcome);
    } catch (error) {
      const failure = asInferenceError(error);
      const endNs = process.hrtime.bigint();
      trace?.timestamp("REQUEST_END", endNs);
      const requestNs = Number(endNs - startNs);
      model.statistics.recordFailure(requestNs);
      this.#report(model, failureReasonOf(failure), requestNs, 0);
      throw failure;
    }
  }

  /** The response cache, for a model whose config enables it, when the server has one; never for sequence models. */
  #cacheFor(model: ModelVersion): ResponseCache | undefined {
    return model.config.response_cache?.enable === true && model.config.sequence_batching === undefined ? this.#responseCache : undefined;
  }

  #succeed(
    model: ModelVersion, request: InferRequest, outputs: readonly OutputTensor[], startNs: bigint, queueNs: number, cache: RequestOutcome["cache"],
  ): InferResponse {
    const endNs = process.hrtime.bigint();
    request.trace?.timestamp("REQUEST_END", endNs);
    const requestNs = Number(endNs - startNs);
    model.statistics.recordSuccess(requestNs, queueNs);
    this.#report(model, undefined, requestNs, queueNs, cache);
    return { modelName: model.name, modelVersion: String(model.version), id: request.id, outputs };
  }

  #report(model: ModelVersion, failureReason: FailureReason | undefined, requestNs: number, queueNs: number, cache?: RequestOutcome["cache"]): void {
    if (this.#observers.length === 0) return;
    const outcome: RequestOutcome = { modelName: model.name, modelVersion: String(model.version), failureReason, requestNs, queueNs, cache };
    for (const o of this.#observers) o.requestCompleted(outcome);
  }

  #selectOutputs(model: ModelVersion, requested: readonly { name: string; classification?: number }[], outputs: OutputTensor[]): OutputTensor[] {
    return requested.map((want) => {
      const output = outputs.find((o) => o.name === want.name);
      if (output === undefined) throw new InferenceError("INTERNAL", `model produced no output '${want.name}'`);
      if (want.classification === undefined) return output;
      const labels = model.signature.outputs.find((o) => o.name === want.name)?.labels;
      return classify(output, want.classification, model.signature.maxBatchSize > 0, labels);
    });
  }

  /**
   * For a shutdown whose deadline passed: refuses new work and fails every queued request with UNAVAILABLE
   * (`message`), in loaded and closing versions alike. Executions already running finish and are answered, since
   * native inference cannot be interrupted safely; {@link close} then resolves once they have. JavaScript ones
   * (TypeScript models) are ended past their unload timeout: the versions drain, as an unload does.
   */
  refuseQueued(message: string): void {
    this.#shuttingDown = true;
    this.#repository.refuseQueued(message);
  }

  /** Stops accepting work, answers what was accepted, and releases every instance. */
  async close(): Promise<void> {
    this.#shuttingDown = true;
    await this.#repository.close();
  }
}

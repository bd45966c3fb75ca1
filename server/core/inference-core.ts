import type { CoreObserver, ModelGauges } from "./core-observer";
import type { LoadOverrides } from "./repository/load-overrides";
import { modelConfigToJson } from "./model-config/config-json";
import { type HandleContext, ModelHandle, type TensorMetadata } from "./model-handle";
import { ModelRepositoryManager, type RepositorySettings } from "./repository/model-repository-manager";
import type { ModelStatisticsSnapshot } from "./repository/model-statistics";
import type { ModelIndexEntry, ModelVersion } from "./repository/model-version";
import { DEFAULT_REQUEST_LIMITS, type RequestLimits } from "./request/request-validation";
import { DEFAULT_STREAM_BACKLOG } from "./request/response-flow";
import type { ResponseStream } from "./request/response-stream";
import { InferenceError } from "./errors";
import { ResponseCache } from "./request/response-cache";
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
  /** Most responses one stream may have written while its client is blocked; defaults to DEFAULT_STREAM_BACKLOG. */
  readonly streamBacklog?: number;
  /** How deeply model calls (BLS) may nest; defaults to DEFAULT_MAX_CALL_DEPTH. */
  readonly maxModelCallDepth?: number;
}

export interface ModelMetadata {
  readonly name: string;
  readonly versions: string[];
  readonly platform: string;
  readonly inputs: TensorMetadata[];
  readonly outputs: TensorMetadata[];
}

// Triton's list and order (core src/server.cc, InferenceServer::InferenceServer), less `cuda_shared_memory`: CUDA
// shared memory cannot be registered here.
export const SERVER_EXTENSIONS = [
  "classification", "sequence", "model_repository", "model_repository(unload_dependents)", "schedule_policy",
  "model_configuration", "system_shared_memory", "binary_tensor_data", "parameters", "statistics", "trace", "logging",
] as const;

/**
 * The core facade (Triton's InferenceServer): the only thing frontends and metrics talk to. Leaves the model
 * lifecycle to its {@link ModelRepositoryManager}; resolves the versions requests run on into {@link ModelHandle}s,
 * which validate and schedule them, apply the classification extension and the response cache, and report to the
 * core's observers. Every error it throws is an {@link InferenceError} with a message meant for the client.
 */
export class InferenceCore {
  readonly #settings: CoreSettings;
  readonly #repository: ModelRepositoryManager;
  readonly #observers: CoreObserver[] = [];
  readonly #responseCache: ResponseCache | undefined;
  #shuttingDown = false;
  readonly #handleContext: HandleContext;
  /** Decoupled models' streams not ended yet: they may outlast every execution. */
  readonly #openStreams = new Set<ResponseStream>();

  constructor(settings: CoreSettings) {
    this.#settings = settings;
    this.#responseCache = settings.responseCacheBytes === undefined ? undefined : new ResponseCache(settings.responseCacheBytes);
    this.#handleContext = {
      shuttingDown: () => this.#shuttingDown,
      requestLimits: settings.requestLimits ?? DEFAULT_REQUEST_LIMITS,
      streamBacklog: settings.streamBacklog ?? DEFAULT_STREAM_BACKLOG,
      openStreams: this.#openStreams,
      cacheFor: (model) => this.#cacheFor(model),
      observed: () => this.#observers.length > 0,
      report: (outcome) => {
        for (const o of this.#observers) o.requestCompleted(outcome);
      },
    };
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
        infer: (request) => this.model(request.modelName, request.modelVersion).infer(request),
      },
      modelCalls: new ModelCalls({ model: (name, version) => this.model(name, version) }, settings.maxModelCallDepth),
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

  /** As Triton's IsLive: not while shutting down, nor after a failed start (SERVER_FAILED_TO_INITIALIZE). */
  isLive(): boolean {
    return !this.#shuttingDown && this.initializationFailure === undefined;
  }

  /** Shutting down: health answers UNAVAILABLE (Triton's "Server exiting") rather than a plain no. */
  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /** Why the model repositories could not be read at start, under `--exit-on-error false`; the server is neither live nor ready. */
  get initializationFailure(): string | undefined {
    return this.#repository.initializationFailure;
  }

  isReady(): boolean {
    if (this.#shuttingDown || this.initializationFailure !== undefined) return false;
    if (!this.#settings.strictReadiness) return true;
    // As in Triton, models never loaded (explicit mode) or unloaded do not count against readiness.
    return this.#repository.loadedIndex().every((e) => e.state === "READY");
  }

  /**
   * Resolves a model version once, for one request: the handle a frontend asks what the request needs (metadata,
   * inputs, whether the model is decoupled) and then runs the request on ({@link ModelHandle.stream}). Throws
   * NOT_FOUND for a model the repository does not serve, UNAVAILABLE for one that is not ready (Triton's words).
   */
  model(name: string, version?: string): ModelHandle {
    return new ModelHandle(this.#resolve(name, version), this.#handleContext);
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
    const handle = this.model(name, version);
    const versions = version ? [version] : this.#repository.servingVersions(name).map((v) => String(v.version));
    return { name, versions, platform: handle.platform, ...handle.tensors() };
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

  /** The response cache, for a model whose config enables it, when the server has one; never for sequence models. */
  #cacheFor(model: ModelVersion): ResponseCache | undefined {
    return model.config.response_cache?.enable === true && model.config.sequence_batching === undefined ? this.#responseCache : undefined;
  }

  /**
   * For a shutdown whose deadline passed: refuses new work and fails every queued request with UNAVAILABLE
   * (`message`), in loaded and closing versions alike, and so every stream of a decoupled model still open (its
   * model sees the request cancelled). Executions already running finish and are answered, since native inference
   * cannot be interrupted safely; {@link close} then resolves once they have. JavaScript ones (TypeScript models)
   * are ended past their unload timeout: the versions drain, as an unload does.
   */
  abandon(message: string): void {
    this.#shuttingDown = true;
    this.#repository.refuseQueued(message);
    for (const stream of [...this.#openStreams]) stream.cancel(new InferenceError("UNAVAILABLE", message));
  }

  /** Stops accepting work, answers what was accepted, and releases every instance. */
  async close(): Promise<void> {
    this.#shuttingDown = true;
    await this.#repository.close();
  }
}

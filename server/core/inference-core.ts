import { classify } from "./request/classification";
import type { CoreObserver, FailureReason, ModelGauges, RequestOutcome } from "./core-observer";
import { asInferenceError, clipped, InferenceError, invalidArg } from "./errors";
import type { InferRequest, InferResponse, OutputTensor, ParameterValue } from "./request/inference-request";
import { type ComposingModels, ensembleDependencies } from "./scheduling/ensemble";
import { type LoadOverrides, refuseModelCode, refuseModelName } from "./repository/load-overrides";
import { modelConfigToJson } from "./model-config/model-config";
import { ENSEMBLE_PLATFORM, type LoadedModel, loadModel, type LoaderSettings } from "./repository/model-loader";
import { directoryFingerprint, listModelDirectories, type ModelDirectory } from "./repository/model-repository";
import { type ModelSource, overrideSource, repositorySource } from "./repository/model-source";
import { fullShape } from "./model-config/model-signature";
import type { ModelStatisticsSnapshot } from "./repository/model-statistics";
import type { ModelIndexEntry, ModelVersion } from "./repository/model-version";
import type { OverrideDirectory } from "./repository/override-directory";
import { DEFAULT_REQUEST_LIMITS, type RequestLimits, validateRequest } from "./request/request-validation";
import { ResponseCache } from "./request/response-cache";

export interface CoreSettings {
  readonly modelRepositories: readonly string[];
  /** Server name in metadata (Triton's `--id`). */
  readonly serverName: string;
  readonly serverVersion: string;
  /** Triton's `--strict-readiness`: ready only when every model is READY. */
  readonly strictReadiness: boolean;
  /** Triton's `--exit-on-error`: a model that fails to load at startup fails the start. */
  readonly exitOnError: boolean;
  /**
   * `none` loads everything at start; `explicit` loads `startupModels` and allows load/unload requests; `poll`
   * loads everything at start and then follows the repository every `repositoryPollMs`.
   */
  readonly modelControlMode: "none" | "explicit" | "poll";
  readonly repositoryPollMs: number;
  /** Triton's `--cache-config local,size=N`: bytes of the response cache; undefined = no cache. */
  readonly responseCacheBytes: number | undefined;
  /** Where poll mode reports what it loaded, unloaded or failed to reload, and instance restarts are logged. */
  readonly log: { info(message: string): void; warn(message: string): void };
  /** Models to load at start in explicit mode; `*` means all. */
  readonly startupModels: readonly string[];
  readonly loader: Omit<LoaderSettings, "observer" | "composing" | "log">;
  /** Bounds on what one request may hold beyond the transport's size limits; defaults to DEFAULT_REQUEST_LIMITS. */
  readonly requestLimits?: RequestLimits;
  /** Whether load requests' `file:` overrides may carry model code (--allow-model-code-upload); off unless set. */
  readonly allowModelCodeUpload?: boolean;
}

export interface ModelMetadata {
  readonly name: string;
  readonly versions: string[];
  readonly platform: string;
  readonly inputs: { name: string; datatype: string; shape: number[] }[];
  readonly outputs: { name: string; datatype: string; shape: number[] }[];
}

export const SERVER_EXTENSIONS = [
  "classification", "model_repository", "model_repository(unload_dependents)", "schedule_policy",
  "model_configuration", "system_shared_memory", "binary_tensor_data", "parameters", "statistics", "trace", "logging",
] as const;

interface ModelEntry {
  /** Set when the model as a whole failed (bad config, unknown backend...). */
  readonly failure: string | undefined;
  readonly versions: ReadonlyMap<number, ModelVersion | Error>;
}

function integerParameter(parameters: InferRequest["parameters"], key: string): number | undefined {
  const value: ParameterValue | undefined = parameters?.[key];
  if (value === undefined) return undefined;
  const number = typeof value === "bigint" ? Number(value) : value;
  if (typeof number !== "number" || !Number.isSafeInteger(number) || number < 0) {
    throw invalidArg(`request parameter '${key}' must be a non-negative integer, got ${JSON.stringify(String(value))}`);
  }
  return number;
}

/**
 * Triton requires model names to be unique across repositories: a name found twice is served from neither, with
 * Triton's reason (MODEL_READY_REASON_DUPLICATE).
 */
const DUPLICATE_MODEL: ModelEntry = { failure: "model appears in two or more repositories", versions: new Map() };

function failureReasonOf(error: InferenceError): FailureReason {
  if (error.code === "CANCELLED") return "CANCELED";
  if (error.code === "UNAVAILABLE") return "REJECTED";
  if (error.code === "INTERNAL") return "BACKEND";
  return "OTHER";
}

/**
 * The core facade: the only thing frontends and metrics talk to. Owns the model lifecycle (load at start or on
 * request, unload), resolves model versions, validates and schedules requests, and applies the classification
 * extension. Every error it throws is an {@link InferenceError} with a message meant for the client.
 */
export class InferenceCore {
  readonly #settings: CoreSettings;
  readonly #models = new Map<string, ModelEntry>();
  readonly #directories = new Map<string, ModelDirectory>();
  readonly #observers: CoreObserver[] = [];
  readonly #composing: ComposingModels = {
    signatureOf: (name, version) => this.#resolve(name, version < 0 ? undefined : String(version)).signature,
    infer: (request) => this.infer(request),
  };
  /** Poll mode: each loaded model's directory fingerprint as it was when its load began. */
  readonly #fingerprints = new Map<string, string>();
  /** Override directories of each model whose load had `file:` overrides, kept while a version comes from them. */
  readonly #overrideDirectories = new Map<string, Set<OverrideDirectory>>();
  readonly #overrideOfVersion = new WeakMap<ModelVersion, OverrideDirectory>();
  /** Models loaded because they were asked for (at start or by a load request), not as an ensemble's step. */
  readonly #explicitlyLoaded = new Set<string>();
  #pollTimer: NodeJS.Timeout | undefined;
  readonly #responseCache: ResponseCache | undefined;
  #shuttingDown = false;
  /** Versions unloaded, replaced or shut down that still answer what they accepted. */
  readonly #closing = new Set<ModelVersion>();
  readonly #requestLimits: RequestLimits;

  constructor(settings: CoreSettings) {
    this.#settings = settings;
    this.#requestLimits = settings.requestLimits ?? DEFAULT_REQUEST_LIMITS;
    this.#responseCache = settings.responseCacheBytes === undefined ? undefined : new ResponseCache(settings.responseCacheBytes);
  }

  observe(observer: CoreObserver): void {
    this.#observers.push(observer);
  }

  /** Scans the repositories and loads the models the control mode asks for. Rejects only under exit-on-error. */
  async start(): Promise<void> {
    const { models, duplicates } = this.#scanRepositories();
    for (const directory of models) this.#directories.set(directory.name, directory);
    const loadAll = this.#settings.modelControlMode !== "explicit" || this.#settings.startupModels.includes("*");
    // As Triton's explicit mode polls only the models it is asked to load, only those can fail as duplicates.
    for (const duplicate of duplicates) {
      if (loadAll || this.#settings.startupModels.includes(duplicate.name)) this.#models.set(duplicate.name, DUPLICATE_MODEL);
    }
    const wanted = loadAll ? models.map((m) => m.name) : this.#settings.startupModels;
    for (const name of wanted) {
      this.#explicitlyLoaded.add(name);
      if (this.#models.has(name)) continue;
      if (!this.#directories.has(name)) throw new Error(`failed to load '${name}': model not found in any model repository`);
      await this.#loadFromRepository(name);
    }
    if (this.#settings.exitOnError) {
      const failures = this.#loadedIndex().filter((e) => e.state !== "READY");
      if (failures.length > 0) {
        throw new Error(`failed to load all models: ${failures.map((f) => `${f.name}${f.version ? ` v${f.version}` : ""}: ${f.reason}`).join("; ")}`);
      }
    }
    if (this.#settings.modelControlMode === "poll") this.#schedulePoll();
  }

  /** The repositories' model folders, under the configured symlink policy. */
  #scanRepositories(): ReturnType<typeof listModelDirectories> {
    return listModelDirectories(this.#settings.modelRepositories, this.#settings.loader.modelSymlinks ?? "inside");
  }

  #schedulePoll(): void {
    this.#pollTimer = setTimeout(() => {
      this.#poll().catch((error: unknown) => this.#settings.log.warn(`repository poll failed: ${(error as Error).message}`)).finally(() => {
        if (!this.#shuttingDown) this.#schedulePoll();
      });
    }, this.#settings.repositoryPollMs);
  }

  /** One pass of poll mode: unload removed models, load new ones, reload changed ones (keeping the old on failure). */
  async #poll(): Promise<void> {
    const { models, duplicates } = this.#scanRepositories();
    const present = new Set(models.map((m) => m.name));
    const duplicated = new Set(duplicates.map((m) => m.name));
    for (const [name, entry] of [...this.#models]) {
      if (present.has(name)) continue;
      this.#models.delete(name);
      this.#fingerprints.delete(name);
      this.#directories.delete(name);
      await this.#close(entry.versions.values());
      this.#settings.log.info(`poll: unloaded '${name}' (its directory is gone)`);
    }
    for (const directory of models) this.#directories.set(directory.name, directory);
    for (const { name, path: modelPath } of models) {
      if (this.#shuttingDown) return;
      if (duplicated.has(name)) {
        const entry = this.#models.get(name);
        if (entry?.failure !== undefined) continue;
        this.#models.set(name, DUPLICATE_MODEL);
        this.#fingerprints.delete(name); // loads again once only one repository has it
        if (entry !== undefined) await this.#close(entry.versions.values());
        this.#settings.log.warn(`poll: '${name}' now appears in more than one model repository; not serving it`);
        continue;
      }
      const known = this.#models.has(name);
      if (known && directoryFingerprint(modelPath) === this.#fingerprints.get(name)) continue;
      const failure = await this.#loadFromRepository(name);
      if (failure === undefined) this.#settings.log.info(`poll: ${known ? "reloaded" : "loaded"} '${name}'`);
      else this.#settings.log.warn(`poll: ${known ? "reloading" : "loading"} '${name}' failed${known ? ", still serving what was loaded before" : ""}: ${failure}`);
    }
  }

  /**
   * Triton's poll step for a repository model, then its load: reads the config (a failure to read it is the
   * model's failure, kept as its reason), then loads. Resolves with why `name` failed, if it did.
   */
  async #loadFromRepository(name: string, visiting = new Set<string>()): Promise<string | undefined> {
    const directory = this.#directories.get(name)!;
    if (this.#settings.modelControlMode === "poll") this.#fingerprints.set(name, directoryFingerprint(directory.path));
    let source: ModelSource;
    try {
      source = repositorySource(directory, this.#settings.loader.autoCompleteConfig);
    } catch (error) {
      return this.#failed(name, error);
    }
    return this.#loadWithDependencies(name, source, visiting);
  }

  /**
   * As Triton: an ensemble's composing models load first, those not loaded yet; `name` itself always (re)loads.
   * Resolves with why `name` failed, if it did.
   */
  async #loadWithDependencies(name: string, source: ModelSource, visiting = new Set<string>()): Promise<string | undefined> {
    visiting.add(name);
    const dependencies = source.config.platform === ENSEMBLE_PLATFORM ? ensembleDependencies(source.config) : [];
    for (const dependency of dependencies) {
      // A cycle or an unknown model is left for the ensemble's own load to report.
      if (!visiting.has(dependency) && !this.#models.has(dependency) && this.#directories.has(dependency)) {
        await this.#loadFromRepository(dependency, visiting);
      }
    }
    return this.#load(name, source);
  }

  /** Records that `name` as a whole failed, unless an earlier load of it still serves. Resolves with the reason. */
  #failed(name: string, error: unknown): string {
    const failure = error instanceof Error ? error.message : String(error);
    const previous = this.#models.get(name);
    if (previous === undefined || previous.failure !== undefined) this.#models.set(name, { failure, versions: new Map() });
    return failure;
  }

  /**
   * Loads `name`, or reloads it when loaded: a reload swaps in every version that loaded and keeps serving a
   * previous version in place of one that failed (or all of them, when the model as a whole failed), as Triton
   * does. Replaced versions finish what they accepted before they close. Resolves with why it failed, if it did.
   */
  async #load(name: string, source: ModelSource): Promise<string | undefined> {
    const previous = this.#models.get(name);
    let loaded: LoadedModel;
    try {
      loaded = await loadModel(source.directory, source.config, {
        ...this.#settings.loader,
        observer: {
          executed: (modelName, version, timings) => {
            for (const o of this.#observers) o.executionCompleted({ modelName, modelVersion: String(version), ...timings });
          },
        },
        composing: this.#composing,
        log: this.#settings.log,
      });
    } catch (error) {
      return this.#failed(name, error);
    }
    const versions = new Map(loaded.versions);
    for (const [number, version] of versions) {
      if (!(version instanceof Error) && source.overrides !== undefined) this.#overrideOfVersion.set(version, source.overrides);
      const before = previous?.versions.get(number);
      if (version instanceof Error && before !== undefined && !(before instanceof Error)) versions.set(number, before);
    }
    this.#models.set(name, { failure: undefined, versions });
    const retained = new Set(versions.values());
    if (previous !== undefined) await this.#close([...previous.versions.values()].filter((v) => !retained.has(v)));
    return [...loaded.versions.values()].find((v): v is Error => v instanceof Error)?.message;
  }

  async #close(versions: Iterable<ModelVersion | Error>): Promise<void> {
    await Promise.all([...versions].map(async (version) => {
      if (version instanceof Error) return;
      this.#closing.add(version);
      try {
        version.pool.drain();
        await version.scheduler.close();
        await version.pool.close();
      } finally {
        this.#closing.delete(version);
      }
    }));
  }

  /**
   * Repository extension: (re)load a model, only in explicit model control mode, from the repository or from
   * `overrides` (Triton's `config` and `file:` load parameters). As in Triton, a failure to find or read the
   * model fails the poll (INTERNAL, `failed to poll from model repository`, the reason appended) and a failure to
   * load it is INVALID_ARG (`load failed for model`); either way what was loaded before keeps serving.
   */
  async loadModel(name: string, overrides?: LoadOverrides): Promise<void> {
    this.#requireExplicitMode();
    refuseModelName(name);
    refuseModelCode(name, overrides, this.#settings.allowModelCodeUpload ?? false);
    const source = await this.#pollForLoad(name, overrides);
    if (source.overrides !== undefined) {
      this.#overrideDirectories.set(name, (this.#overrideDirectories.get(name) ?? new Set()).add(source.overrides));
    }
    this.#explicitlyLoaded.add(name);
    let failed: string | undefined;
    try {
      failed = await this.#loadWithDependencies(name, source);
    } finally {
      await this.#removeUnusedOverrides(name);
    }
    if (failed !== undefined) throw new InferenceError("INVALID_ARG", `load failed for model '${name}': ${failed}`);
  }

  /** Triton's poll of one model for an explicit load: where it is, and its config. */
  async #pollForLoad(name: string, overrides: LoadOverrides | undefined): Promise<ModelSource> {
    try {
      if (overrides !== undefined && overrides.files.size > 0) return await overrideSource(name, overrides);
      const { models, duplicates } = this.#scanRepositories();
      if (duplicates.some((m) => m.name === name)) throw new Error("not unique across all model repositories");
      const directory = models.find((m) => m.name === name);
      if (directory === undefined) throw new Error("model not found in any model repository");
      this.#directories.set(name, directory);
      return repositorySource(directory, this.#settings.loader.autoCompleteConfig, overrides?.config);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.#settings.log.warn(`failed to poll model '${name}': ${reason}`);
      throw new InferenceError("INTERNAL", `failed to load '${name}', failed to poll from model repository: ${reason}`);
    }
  }

  /** Removes the override directories of `name` that no loaded version comes from any more. */
  async #removeUnusedOverrides(name: string): Promise<void> {
    const directories = this.#overrideDirectories.get(name);
    if (directories === undefined) return;
    const inUse = new Set([...(this.#models.get(name)?.versions.values() ?? [])]
      .map((version) => (version instanceof Error ? undefined : this.#overrideOfVersion.get(version))));
    for (const directory of directories) {
      if (inUse.has(directory)) continue;
      directories.delete(directory);
      await directory.remove();
    }
    if (directories.size === 0) this.#overrideDirectories.delete(name);
  }

  /**
   * Repository extension: unload a model (a model that is not loaded is no error, as in Triton). With
   * `unloadDependents` (the `unload_dependents` parameter), an ensemble's step models go too, where they were
   * loaded along with it rather than asked for, and no other loaded ensemble uses them.
   */
  async unloadModel(name: string, unloadDependents = false): Promise<void> {
    this.#requireExplicitMode();
    const names = unloadDependents ? this.#withDependents(name) : [name];
    for (const unloading of names) {
      const entry = this.#models.get(unloading);
      this.#models.delete(unloading);
      this.#fingerprints.delete(unloading);
      this.#explicitlyLoaded.delete(unloading);
      if (entry !== undefined) await this.#close(entry.versions.values());
      await this.#removeUnusedOverrides(unloading);
    }
  }

  /** `name`, then each step model (at any depth) that goes with it: not asked for, and used by no other ensemble. */
  #withDependents(name: string): string[] {
    const unloading = [name];
    const stepModels = (model: string): string[] => {
      const version = [...(this.#models.get(model)?.versions.values() ?? [])].find((v): v is ModelVersion => !(v instanceof Error));
      return version?.config.platform === ENSEMBLE_PLATFORM ? ensembleDependencies(version.config) : [];
    };
    for (let i = 0; i < unloading.length; i++) {
      for (const step of stepModels(unloading[i]!)) {
        if (unloading.includes(step) || this.#explicitlyLoaded.has(step) || !this.#models.has(step)) continue;
        const usedElsewhere = [...this.#models.keys()].some((other) => !unloading.includes(other) && stepModels(other).includes(step));
        if (!usedElsewhere) unloading.push(step);
      }
    }
    return unloading;
  }

  /** Triton's words, in none mode too: its model control is either polling or explicit. */
  #requireExplicitMode(): void {
    if (this.#settings.modelControlMode !== "explicit") {
      throw new InferenceError("UNAVAILABLE", "explicit model load / unload is not allowed if polling is enabled");
    }
  }

  isLive(): boolean {
    return !this.#shuttingDown;
  }

  isReady(): boolean {
    if (this.#shuttingDown) return false;
    if (!this.#settings.strictReadiness) return true;
    // As in Triton, models never loaded (explicit mode) or unloaded do not count against readiness.
    return this.#loadedIndex().every((e) => e.state === "READY");
  }

  #loadedIndex(): ModelIndexEntry[] {
    return this.repositoryIndex(false).filter((e) => this.#models.has(e.name));
  }

  /** Throws NOT_FOUND / UNAVAILABLE as infer() would, so frontends can refuse before decoding a body. */
  checkModelAvailable(name: string, version?: string): void {
    this.#resolve(name, version);
  }

  serverMetadata(): { name: string; version: string; extensions: string[] } {
    return { name: this.#settings.serverName, version: this.#settings.serverVersion, extensions: [...SERVER_EXTENSIONS] };
  }

  repositoryIndex(readyOnly: boolean): ModelIndexEntry[] {
    const entries: ModelIndexEntry[] = [];
    const names = new Set([...this.#directories.keys(), ...this.#models.keys()]);
    for (const name of [...names].sort()) {
      const model = this.#models.get(name);
      if (model === undefined) {
        if (!readyOnly) entries.push({ name, state: "UNAVAILABLE", reason: "unloaded" });
        continue;
      }
      if (model.failure !== undefined) {
        if (!readyOnly) entries.push({ name, state: "UNAVAILABLE", reason: model.failure });
        continue;
      }
      for (const [version, loaded] of model.versions) {
        const ready = !(loaded instanceof Error);
        if (readyOnly && !ready) continue;
        entries.push({ name, version: String(version), state: ready ? "READY" : "UNAVAILABLE", reason: ready ? "" : loaded.message });
      }
    }
    return entries;
  }

  /** Resolves a model version for serving: NOT_FOUND for unknown ones, UNAVAILABLE for ones that failed. */
  #resolve(name: string, version: string | undefined): ModelVersion {
    const model = this.#models.get(name);
    if (model === undefined) throw new InferenceError("NOT_FOUND", `Request for unknown model: '${clipped(name)}' is not found`);
    if (model.failure !== undefined) throw new InferenceError("UNAVAILABLE", `Request for unknown model: '${clipped(name)}' is not ready: ${model.failure}`);
    if (version === undefined || version === "") {
      const ready = [...model.versions.values()].filter((v): v is ModelVersion => !(v instanceof Error));
      const latest = ready.sort((a, b) => b.version - a.version)[0];
      if (latest === undefined) {
        const reasons = [...model.versions].flatMap(([number, v]) => (v instanceof Error ? [`version ${number}: ${v.message}`] : []));
        throw new InferenceError("UNAVAILABLE", `Request for unknown model: '${clipped(name)}' has no available versions${reasons.length > 0 ? ` (${reasons.join("; ")})` : ""}`);
      }
      return latest;
    }
    if (!/^[0-9]+$/.test(version)) throw invalidArg(`failed to parse model version '${clipped(version)}' for model '${clipped(name)}': versions are non-negative integers`);
    const loaded = model.versions.get(Number(version));
    if (loaded === undefined) throw new InferenceError("NOT_FOUND", `Request for unknown model: '${clipped(name)}' version ${clipped(version)} is not found`);
    if (loaded instanceof Error) throw new InferenceError("UNAVAILABLE", `Request for unknown model: '${clipped(name)}' version ${clipped(version)} is not ready: ${loaded.message}`);
    return loaded;
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
    const versions = version
      ? [version]
      : [...(this.#models.get(name)?.versions.entries() ?? [])].filter(([, v]) => !(v instanceof Error)).map(([v]) => String(v));
    const describe = (tensors: typeof model.signature.inputs): ModelMetadata["inputs"] =>
      tensors.map((t) => ({ name: t.name, datatype: t.datatype, shape: fullShape(model.signature, t) }));
    return {
      name, versions, platform: model.config.platform || model.config.backend,
      inputs: describe(model.signature.inputs), outputs: describe(model.signature.outputs),
    };
  }

  modelConfig(name: string, version?: string): Record<string, unknown> {
    return modelConfigToJson(this.#resolve(name, version).config);
  }

  /** Statistics extension: all loaded versions, one model's, or one version's. */
  statistics(name?: string, version?: string): ModelStatisticsSnapshot[] {
    if (name === undefined || name === "") {
      const all: ModelStatisticsSnapshot[] = [];
      for (const entry of this.#models.values()) {
        for (const loaded of entry.versions.values()) if (!(loaded instanceof Error)) all.push(loaded.statistics.snapshot());
      }
      return all;
    }
    if (version !== undefined && version !== "") return [this.#resolve(name, version).statistics.snapshot()];
    this.#resolve(name, undefined);
    return [...(this.#models.get(name)?.versions.values() ?? [])]
      .filter((v): v is ModelVersion => !(v instanceof Error))
      .map((v) => v.statistics.snapshot());
  }

  modelGauges(): ModelGauges[] {
    const gauges: ModelGauges[] = [];
    for (const entry of this.#models.values()) {
      for (const loaded of entry.versions.values()) {
        if (loaded instanceof Error) continue;
        gauges.push({
          modelName: loaded.name, modelVersion: String(loaded.version), pendingRequests: loaded.scheduler.pendingCount,
          queueDepth: loaded.scheduler.queueDepth, instanceCount: loaded.pool.size, instanceBusySeconds: loaded.pool.busySeconds(),
          placements: loaded.placements,
          instanceRestarts: loaded.pool.restartCount,
        });
      }
    }
    return gauges;
  }

  async infer(request: InferRequest): Promise<InferResponse> {
    const startNs = process.hrtime.bigint();
    const model = this.#resolve(request.modelName, request.modelVersion);
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
      const sequence = model.sequences?.prepare(request.parameters, validated.batchSize, model.signature.maxBatchSize > 0);
      if (sequence !== undefined) for (const control of sequence.controls) validated.inputs.set(control.name, control);
      const { outputs, queueNs } = sequence !== undefined
        ? await sequence.run(() => model.scheduler.enqueue(validated, options))
        : await model.scheduler.enqueue(validated, options);
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
    return model.config.response_cache?.enable === true && model.sequences === undefined ? this.#responseCache : undefined;
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
    for (const o of this.#observers) {
      o.requestCompleted({ modelName: model.name, modelVersion: String(model.version), failureReason, requestNs, queueNs, cache });
    }
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
    const refuse = (version: ModelVersion): void => {
      version.scheduler.refuseQueued(message);
      version.pool.drain();
    };
    for (const entry of this.#models.values()) {
      for (const version of entry.versions.values()) if (!(version instanceof Error)) refuse(version);
    }
    for (const version of this.#closing) refuse(version);
  }

  /** Stops accepting work, answers what was accepted, and releases every instance. */
  async close(): Promise<void> {
    this.#shuttingDown = true;
    clearTimeout(this.#pollTimer);
    const entries = [...this.#models.values()];
    this.#models.clear();
    await Promise.all(entries.map((e) => this.#close(e.versions.values())));
    await Promise.all([...this.#overrideDirectories.keys()].map((name) => this.#removeUnusedOverrides(name)));
  }
}

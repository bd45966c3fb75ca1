import { InferenceError } from "../errors";
import type { ComposingModels } from "../scheduling/ensemble";
import { type LoadOverrides, refuseModelCode, refuseModelName } from "./load-overrides";
import { ensemblesMissingSteps, type LoadedModels, stepModelsOf, withDependents } from "./model-dependents";
import type { ModelConfig } from "../model-config/model-config";
import { ENSEMBLE_PLATFORM } from "../model-config/validate-ensemble";
import { type DependencyView, ensembleDependencyProblem } from "./ensemble-dependency-check";
import { type LoadedModel, loadModel, type LoaderSettings } from "./model-loader";
import { directoryFingerprint, listModelDirectories, type ModelDirectory } from "./model-repository";
import { type ModelSource, overrideSource, repositorySource } from "./model-source";
import { indexRows, type ModelEntry, resolveVersion } from "./model-states";
import type { ModelIndexEntry, ModelVersion } from "./model-version";
import { OverrideDirectories } from "./override-directories";

export interface RepositorySettings {
  readonly modelRepositories: readonly string[];
  /** Triton's `--exit-on-error`: a model that fails to load at startup fails the start. */
  readonly exitOnError: boolean;
  /**
   * `none` loads everything at start; `explicit` loads `startupModels` and allows load/unload requests; `poll`
   * loads everything at start and then follows the repository every `repositoryPollMs`.
   */
  readonly modelControlMode: "none" | "explicit" | "poll";
  readonly repositoryPollMs: number;
  /** Where poll mode reports what it loaded, unloaded or failed to reload, and instance restarts are logged. */
  readonly log: { info(message: string): void; warn(message: string): void };
  /** Models to load at start in explicit mode; `*` means all. */
  readonly startupModels: readonly string[];
  readonly loader: Omit<LoaderSettings, "observer" | "composing" | "modelCalls" | "log">;
  /** Whether load requests' `file:` overrides may carry model code (--allow-model-code-upload); off unless set. */
  readonly allowModelCodeUpload?: boolean;
}

/** What the manager's loads are wired to: where executions are reported, and the models ensembles run on. */
export interface RepositoryLinks {
  readonly observer: LoaderSettings["observer"];
  readonly composing: ComposingModels;
  readonly modelCalls: LoaderSettings["modelCalls"];
}

/**
 * Triton requires model names to be unique across repositories: a name found twice is served from neither, with
 * Triton's reason (MODEL_READY_REASON_DUPLICATE).
 */
const DUPLICATE_MODEL: ModelEntry = { failure: "model appears in two or more repositories", versions: new Map() };

const servable = (version: ModelVersion | Error): version is ModelVersion => !(version instanceof Error);

/**
 * Triton's ModelRepositoryManager: scans the repositories, loads what the control mode asks for (at start, by
 * polling, or on request, with `config`/`file:` overrides), reloads keeping what served, unloads with dependents,
 * and keeps the model index and states. Resolves a name and version to the loaded version that serves it.
 */
export class ModelRepositoryManager {
  readonly #settings: RepositorySettings;
  readonly #links: RepositoryLinks;
  readonly #models = new Map<string, ModelEntry>();
  readonly #directories = new Map<string, ModelDirectory>();
  /** Poll mode: each loaded model's directory fingerprint as it was when its load began. */
  readonly #fingerprints = new Map<string, string>();
  readonly #overrides = new OverrideDirectories();
  /** Models loaded because they were asked for (at start or by a load request), not as an ensemble's step. */
  readonly #explicitlyLoaded = new Set<string>();
  #pollTimer: NodeJS.Timeout | undefined;
  #stopping = false;
  #initializationFailure: string | undefined;
  /** Versions unloaded, replaced or shut down that still answer what they accepted. */
  readonly #closing = new Set<ModelVersion>();

  constructor(settings: RepositorySettings, links: RepositoryLinks) {
    this.#settings = settings;
    this.#links = links;
  }

  /** Scans the repositories and loads the models the control mode asks for. Rejects only under exit-on-error. */
  async start(): Promise<void> {
    let scanned: ReturnType<typeof listModelDirectories>;
    try {
      scanned = this.#scanRepositories();
    } catch (error) {
      // Triton (core src/server.cc, InferenceServer::Init): a repository that cannot be read fails the server's
      // initialization; without exit-on-error it keeps serving, neither live nor ready (SERVER_FAILED_TO_INITIALIZE),
      // with no models.
      if (this.#settings.exitOnError) throw error;
      this.#initializationFailure = (error as Error).message;
      return;
    }
    const { models, duplicates } = scanned;
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
      const failures = this.loadedIndex().filter((e) => e.state !== "READY");
      if (failures.length > 0) {
        throw new Error(`failed to load all models: ${failures.map((f) => `${f.name}${f.version ? ` v${f.version}` : ""}: ${f.reason}`).join("; ")}`);
      }
    }
    if (this.#settings.modelControlMode === "poll") this.#schedulePoll();
  }

  /** Why the repositories could not be read at start (the server is then never ready); undefined when they could. */
  get initializationFailure(): string | undefined {
    return this.#initializationFailure;
  }

  /** The repositories' model folders, under the configured symlink policy. */
  #scanRepositories(): ReturnType<typeof listModelDirectories> {
    return listModelDirectories(this.#settings.modelRepositories, this.#settings.loader.modelSymlinks ?? "inside");
  }

  #schedulePoll(): void {
    this.#pollTimer = setTimeout(() => {
      this.#poll().catch((error: unknown) => this.#settings.log.warn(`repository poll failed: ${(error as Error).message}`)).finally(() => {
        if (!this.#stopping) this.#schedulePoll();
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
      if (this.#stopping) return;
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
    const dependencies = stepModelsOf(source.config);
    for (const dependency of dependencies) {
      // A cycle or an unknown model is left for the ensemble's dependency check to report.
      if (!visiting.has(dependency) && !this.#models.has(dependency) && this.#directories.has(dependency)) {
        await this.#loadFromRepository(dependency, visiting);
      }
    }
    const problem = dependencies.length > 0 ? ensembleDependencyProblem(source.config, this.#dependencyView()) : undefined;
    if (problem !== undefined) return this.#failed(name, new Error(problem));
    return this.#load(name, source);
  }

  /** The repository as Triton's dependency graph sees an ensemble's step models. */
  #dependencyView(): DependencyView {
    const configOf = (model: string): ModelConfig | undefined => {
      const serving = this.servingVersions(model)[0];
      if (serving !== undefined) return serving.config;
      const directory = this.#directories.get(model);
      try {
        return directory === undefined ? undefined : repositorySource(directory, this.#settings.loader.autoCompleteConfig).config;
      } catch {
        return undefined; // a config that cannot be read has no steps to follow
      }
    };
    return {
      exists: (model) => this.#directories.has(model) || this.#models.has(model),
      stepModels: (model) => {
        const config = configOf(model);
        return config === undefined ? [] : stepModelsOf(config);
      },
      servingVersions: (model) => this.servingVersions(model).map((version) => version.version),
      failure: (model) => {
        const entry = this.#models.get(model);
        return entry?.failure ?? [...(entry?.versions.values() ?? [])].find((v): v is Error => v instanceof Error)?.message;
      },
    };
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
        observer: this.#links.observer,
        composing: this.#links.composing,
        modelCalls: this.#links.modelCalls,
        log: this.#settings.log,
      });
    } catch (error) {
      return this.#failed(name, error);
    }
    const versions = new Map(loaded.versions);
    for (const [number, version] of versions) {
      if (!(version instanceof Error) && source.overrides !== undefined) this.#overrides.loaded(version, source.overrides);
      const before = previous?.versions.get(number);
      if (version instanceof Error && before !== undefined && !(before instanceof Error)) versions.set(number, before);
    }
    this.#models.set(name, { failure: undefined, versions });
    const retained = new Set(versions.values());
    if (previous !== undefined) await this.#close([...previous.versions.values()].filter((v) => !retained.has(v)));
    // Triton's LoadTracker reason (core src/model_repository_manager/model_lifecycle.cc, OnLoadComplete): each
    // failed version in turn.
    const failures = [...loaded.versions].flatMap(([number, v]) => (v instanceof Error ? [`version ${number} is at UNAVAILABLE state: ${v.message};`] : []));
    return failures.length > 0 ? failures.join("") : undefined;
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
  /**
   * Whether the backend or platform a config names runs code from the model directory, as the backend declares. A
   * config naming none loads on a backend that recognizes its model file; an ensemble runs none of its own; a
   * backend this server does not have is taken to run code (its load fails anyway).
   */
  #runsModelCode(named: string): boolean {
    const backends = [...this.#settings.loader.backends.values()];
    if (named === "") return backends.some((backend) => backend.recognizedByModelFile === true && backend.runsModelCode);
    if (named === ENSEMBLE_PLATFORM) return false;
    const backend = this.#settings.loader.backends.get(named) ?? backends.find((b) => b.platforms?.includes(named) === true);
    return backend?.runsModelCode ?? true;
  }

  async loadModel(name: string, overrides?: LoadOverrides): Promise<void> {
    this.#requireExplicitMode();
    refuseModelName(name);
    refuseModelCode(name, overrides, this.#settings.allowModelCodeUpload ?? false, (backend) => this.#runsModelCode(backend));
    const source = await this.#pollForLoad(name, overrides);
    if (source.overrides !== undefined) this.#overrides.add(name, source.overrides);
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
      if (overrides !== undefined && overrides.files.size > 0) return await overrideSource(name, overrides, this.#settings.loader.autoCompleteConfig);
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

  async #removeUnusedOverrides(name: string): Promise<void> {
    await this.#overrides.removeUnused(name, this.servingVersions(name));
  }

  /**
   * Repository extension: unload a model (a model that is not loaded is no error, as in Triton). With
   * `unloadDependents` (the `unload_dependents` parameter), an ensemble's step models go too, where they were
   * loaded along with it rather than asked for, and no other loaded ensemble uses them.
   */
  async unloadModel(name: string, unloadDependents = false): Promise<void> {
    this.#requireExplicitMode();
    const names = unloadDependents ? withDependents(name, this.#loadedModels()) : [name];
    for (const unloading of names) {
      const entry = this.#models.get(unloading);
      this.#models.delete(unloading);
      this.#fingerprints.delete(unloading);
      this.#explicitlyLoaded.delete(unloading);
      if (entry !== undefined) await this.#close(entry.versions.values());
      await this.#removeUnusedOverrides(unloading);
    }
    await this.#unloadEnsemblesMissing(names);
  }

  /** Unloads the ensembles that lost a step, UNAVAILABLE with Triton's reason. */
  async #unloadEnsemblesMissing(unloaded: readonly string[]): Promise<void> {
    for (const { name, missing } of ensemblesMissingSteps(unloaded, this.#loadedModels())) {
      const entry = this.#models.get(name)!;
      this.#models.set(name, { failure: `ensemble '${name}' depends on '${missing}' which has no loaded version.`, versions: new Map() });
      await this.#close(entry.versions.values());
    }
  }

  /** The loaded models as unloading sees them: their names, which were asked for, and each one's step models. */
  #loadedModels(): LoadedModels {
    return {
      names: [...this.#models.keys()], explicitlyLoaded: this.#explicitlyLoaded,
      stepModels: (model: string) => {
        const version = this.servingVersions(model)[0];
        return version === undefined ? [] : stepModelsOf(version.config);
      },
    };
  }

  /** Triton's words, in none mode too: its model control is either polling or explicit. */
  #requireExplicitMode(): void {
    if (this.#settings.modelControlMode !== "explicit") {
      throw new InferenceError("UNAVAILABLE", "explicit model load / unload is not allowed if polling is enabled");
    }
  }

  /** The index rows of the models loaded or failed (not those never loaded, or unloaded). */
  loadedIndex(): ModelIndexEntry[] {
    return this.index(false).filter((e) => this.#models.has(e.name));
  }

  /** Triton's repository index: every model of the repositories, each loaded version a row; `readyOnly`: READY ones. */
  index(readyOnly: boolean): ModelIndexEntry[] {
    const names = new Set([...this.#directories.keys(), ...this.#models.keys()]);
    return [...names].sort().flatMap((name) => indexRows(name, this.#models.get(name), readyOnly));
  }

  /** The loaded version that serves `version` of `name` (the latest when undefined or empty), else Triton's error. */
  resolve(name: string, version: string | undefined): ModelVersion {
    return resolveVersion(name, this.#models.get(name), version);
  }

  /** The versions of `name` that serve, in load order; none for an unknown model. */
  servingVersions(name: string): ModelVersion[] {
    return [...(this.#models.get(name)?.versions.values() ?? [])].filter(servable);
  }

  /** Every version that serves, of every model. */
  allServingVersions(): ModelVersion[] {
    return [...this.#models.keys()].flatMap((name) => this.servingVersions(name));
  }

  /**
   * Stops polling and fails every queued request with UNAVAILABLE (`message`), in loaded and closing versions
   * alike. Native executions already running finish; JavaScript ones (TypeScript models) are ended past their
   * unload timeout: the versions' pools drain, as an unload does.
   */
  refuseQueued(message: string): void {
    this.#stopping = true;
    const refuse = (version: ModelVersion): void => {
      version.scheduler.refuseQueued(message);
      version.pool.drain();
    };
    for (const version of this.allServingVersions()) refuse(version);
    for (const version of this.#closing) refuse(version);
  }

  /** Stops polling, answers what was accepted, and releases every instance and override directory. */
  async close(): Promise<void> {
    this.#stopping = true;
    clearTimeout(this.#pollTimer);
    const entries = [...this.#models.values()];
    this.#models.clear();
    await Promise.all(entries.map((e) => this.#close(e.versions.values())));
    await Promise.all(this.#overrides.models.map((name) => this.#removeUnusedOverrides(name)));
  }
}

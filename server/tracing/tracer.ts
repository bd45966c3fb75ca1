import { invalidArg } from "../core/index";
import { RequestTrace, TraceBudget } from "./request-trace";
import { TraceFile } from "./trace-file";
import { invalidReason, type TraceSettingUpdate, type TraceSettingValues } from "./trace-settings";

export interface TracerOptions {
  /** The command line's setting (`--trace-config`): the global setting's fallback. */
  readonly setting: TraceSettingValues;
  /** Bytes of traces one file may hold back (waiting to be written, or collected for a group). */
  readonly maxPendingBytes: number;
  readonly log: { warn(message: string): void };
}

type SettingKey = "level" | "rate" | "count" | "logFrequency";
const SETTING_KEYS: readonly SettingKey[] = ["level", "rate", "count", "logFrequency"];

/**
 * One scope's live setting (Triton's TraceSetting): its values, which of them the scope sets itself (the rest
 * follow its fallback), its sampling counters, and the traces it collected and has not written yet.
 */
class TraceScope {
  readonly values: TraceSettingValues;
  readonly specified: ReadonlySet<SettingKey>;
  /** Traces still to collect (-1: no limit); Triton reports this as the setting's trace_count. */
  remaining: number;
  readonly #file: TraceFile | undefined;
  readonly #maxPendingBytes: number;
  readonly #oversized: () => void;
  readonly #valid: boolean;
  #requests = 0;
  #inFlight = 0;
  #group: string[] = [];
  #groupBytes = 0;
  #retired = false;

  constructor(
    values: TraceSettingValues, specified: ReadonlySet<SettingKey>, file: TraceFile | undefined, maxPendingBytes: number, oversized: () => void,
  ) {
    this.values = values;
    this.specified = specified;
    this.remaining = values.count;
    this.#file = file;
    this.#maxPendingBytes = maxPendingBytes;
    this.#oversized = oversized;
    // A valid setting names a file, for which the tracer always has one.
    this.#valid = invalidReason(values) === undefined;
  }

  get current(): TraceSettingValues {
    return { ...this.values, count: this.remaining };
  }

  get canSample(): boolean {
    return this.#valid && this.remaining !== 0;
  }

  /** Triton's sampling: the rate-th request of this scope, then every rate-th, while the count lasts. */
  sample(nextId: () => number): RequestTrace | undefined {
    if (!this.canSample || ++this.#requests % this.values.rate !== 0) return undefined;
    if (this.remaining > 0) this.remaining--;
    this.#inFlight++;
    return new RequestTrace(this.values.level, new TraceBudget(this.#maxPendingBytes), nextId, (objects) => this.#finished(objects));
  }

  /** The scope is replaced: what it collected is written once its last trace ends (Triton's ~TraceSetting). */
  retire(): void {
    this.#retired = true;
    if (this.#inFlight === 0) this.#flush();
  }

  /** `objects` is empty for a trace that recorded nothing at its level, undefined for one past its budget. */
  #finished(objects: string | undefined): void {
    this.#inFlight--;
    if (objects === undefined) this.#oversized();
    const file = this.#file!;
    // Without groups or a count, Triton writes everything to `file` at shutdown; appending as traces end gives
    // the same file without holding every trace in memory.
    if (this.values.logFrequency === 0 && this.values.count === -1) {
      if (objects) file.append(objects);
      return;
    }
    if (objects) {
      // A group held in memory stays within the file's bound: what it has goes out early rather than be dropped.
      if (this.#groupBytes + objects.length > this.#maxPendingBytes) this.#flush();
      this.#group.push(objects);
      this.#groupBytes += objects.length;
    }
    const groupFull = this.values.logFrequency > 0 && this.#group.length >= this.values.logFrequency;
    // As Triton, the traces of an exhausted count go to `<file>.<index>` once the last of them ends.
    const countDone = this.remaining === 0 && this.#inFlight === 0;
    if (groupFull || countDone) this.#writeGroup(true);
    else if (this.#retired && this.#inFlight === 0) this.#flush();
  }

  #flush(): void {
    this.#writeGroup(this.values.logFrequency > 0);
  }

  #writeGroup(indexed: boolean): void {
    if (this.#group.length === 0) return;
    const objects = this.#group.join(",");
    this.#group = [];
    this.#groupBytes = 0;
    if (indexed) this.#file!.writeIndexed(objects);
    else this.#file!.append(objects);
  }
}

/**
 * Triton's trace extension in its "triton" mode (TraceManager): the global setting and per-model overrides,
 * sampling, and the trace files. A frontend asks {@link sample} once per inference request; while no scope can
 * trace, that is one field check. Settings change at run time; a replaced scope writes what it collected once
 * its traces in flight end. {@link close} writes everything left and closes the files.
 */
export class Tracer {
  readonly #options: TracerOptions;
  readonly #files = new Map<string, TraceFile>();
  #global: TraceScope;
  readonly #models = new Map<string, TraceScope>();
  #nextId = 1;
  #active = false;
  #warnedOversized = false;
  readonly #nextIdOf = (): number => this.#nextId++;

  constructor(options: TracerOptions) {
    this.#options = options;
    this.#global = this.#scope(options.setting, new Set());
    this.#refreshActive();
  }

  /** A trace for this request when its model's setting samples it; undefined otherwise. */
  sample(modelName: string): RequestTrace | undefined {
    if (!this.#active) return undefined;
    return (this.#models.get(modelName) ?? this.#global).sample(this.#nextIdOf);
  }

  /** The setting in force for `modelName` (its override, else the global one), or the global one. */
  setting(modelName?: string): TraceSettingValues {
    return ((modelName === undefined ? undefined : this.#models.get(modelName)) ?? this.#global).current;
  }

  /**
   * Applies a validated update to the global setting (no model) or to a model's override, as Triton's
   * UpdateTraceSetting: a value given is the scope's own, `null` gives it back to the fallback, the rest stay as
   * they were. A model whose override keeps no value of its own follows the global setting again. Throws
   * INVALID_ARG, changing nothing, for a setting that would trace but cannot.
   */
  update(modelName: string | undefined, update: TraceSettingUpdate): void {
    if (modelName === undefined) {
      const next = this.#derive(this.#global, this.#options.setting, update);
      this.#global.retire();
      this.#global = next;
      // Models follow the global setting for what they do not set themselves.
      for (const [name, scope] of this.#models) {
        if (scope.specified.size === SETTING_KEYS.length) continue;
        scope.retire();
        this.#models.set(name, this.#derive(scope, this.#global.current, {}));
      }
    } else {
      const current = this.#models.get(modelName);
      const next = this.#derive(current, this.#global.current, update);
      current?.retire();
      if (next.specified.size === 0) this.#models.delete(modelName);
      else this.#models.set(modelName, next);
    }
    this.#refreshActive();
  }

  /** Stops sampling, writes what every scope collected, and closes the files. */
  async close(): Promise<void> {
    this.#active = false;
    this.#global.retire();
    for (const scope of this.#models.values()) scope.retire();
    await Promise.all([...this.#files.values()].map((file) => file.close()));
  }

  #derive(current: TraceScope | undefined, fallback: TraceSettingValues, update: TraceSettingUpdate): TraceScope {
    const specified = new Set<SettingKey>();
    const values: { -readonly [K in keyof TraceSettingValues]: TraceSettingValues[K] } = { ...fallback };
    const own = current?.current;
    for (const key of SETTING_KEYS) {
      const given = update[key];
      if (given === null) continue;
      if (given !== undefined) {
        (values as Record<SettingKey, unknown>)[key] = given;
        specified.add(key);
      } else if (own !== undefined && current!.specified.has(key)) {
        (values as Record<SettingKey, unknown>)[key] = own[key];
        specified.add(key);
      }
    }
    const reason = invalidReason(values);
    if (reason !== undefined && values.level.length > 0) throw invalidArg(`Attempting to set invalid trace setting :${reason}`);
    return this.#scope(values, specified);
  }

  #scope(values: TraceSettingValues, specified: ReadonlySet<SettingKey>): TraceScope {
    return new TraceScope(values, specified, this.#fileFor(values.file), this.#options.maxPendingBytes, () => this.#warnOversized());
  }

  #fileFor(path: string): TraceFile | undefined {
    if (path === "") return undefined;
    let file = this.#files.get(path);
    if (file === undefined) {
      file = new TraceFile(path, { maxPendingBytes: this.#options.maxPendingBytes, log: this.#options.log });
      this.#files.set(path, file);
    }
    return file;
  }

  #warnOversized(): void {
    if (this.#warnedOversized) return;
    this.#warnedOversized = true;
    this.#options.log.warn(`a trace larger than --trace-max-pending-bytes (${this.#options.maxPendingBytes}) was dropped: its tensors are too large to trace at level TENSORS`);
  }

  #refreshActive(): void {
    this.#active = this.#global.canSample || [...this.#models.values()].some((scope) => scope.canSample);
  }
}

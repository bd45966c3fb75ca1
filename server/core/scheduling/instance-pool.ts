import type { BackendInstance } from "../../backends/backend";

/** How a model version replaces an instance that died on its own (see {@link BackendInstance.lost}). */
export interface InstanceRestarts {
  /** Starts a fresh instance in slot `index` (same spec, warmed up like the first). */
  readonly start: (index: number) => Promise<BackendInstance>;
  /** Delay before the first restart of a slot; doubles with each consecutive failure, up to `maxBackoffMs`. */
  readonly initialBackoffMs: number;
  readonly maxBackoffMs: number;
  /** Names an instance in log lines, e.g. `instance squeezenet_0_1 of 'squeezenet' version 1`. */
  readonly describe: (index: number) => string;
  readonly log: { info(message: string): void; warn(message: string): void };
}

/** What the pool tells its scheduler. */
export interface PoolListener {
  /** An instance was (re)started and is idle. */
  available(): void;
  /** No instance is alive and none is coming back (`why`): queued requests would wait for nothing. */
  allDown(why: string): void;
}

/**
 * A model version's instances. Upholds Triton's rule that an instance runs at most one execution at a time:
 * the scheduler takes an idle instance and gives it back when the execution settles. Keeps the busy time that
 * metrics turn into an instance utilization.
 *
 * An instance that dies on its own leaves the pool at once (its execution already failed) and is replaced in its
 * slot after a backoff: the delay starts at `initialBackoffMs` and doubles with every death or failed start that
 * follows within `maxBackoffMs` of the slot's last start, up to `maxBackoffMs`. Requests meanwhile go to the
 * other instances, or wait in the queue for the replacement.
 */
export class InstancePool {
  readonly #slots: (BackendInstance | undefined)[];
  readonly #idle: BackendInstance[];
  readonly #busySinceNs = new Map<BackendInstance, bigint>();
  readonly #restarts: InstanceRestarts | undefined;
  /** Per slot: consecutive failures (the backoff exponent) and when its instance last started. */
  readonly #failureStreak: number[];
  readonly #startedAtMs: number[];
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #starting = new Set<Promise<void>>();
  #listener: PoolListener | undefined;
  #busyNs = 0n;
  #restartCount = 0;
  #closed = false;
  #draining = false;

  constructor(instances: readonly BackendInstance[], restarts?: InstanceRestarts) {
    this.#slots = [...instances];
    this.#idle = [...instances];
    this.#restarts = restarts;
    this.#failureStreak = instances.map(() => 0);
    this.#startedAtMs = instances.map(() => Date.now());
    instances.forEach((instance, index) => this.#watch(instance, index));
  }

  listen(listener: PoolListener): void {
    this.#listener = listener;
  }

  /** Instances alive now (a dead one counts again once its replacement is up). */
  get size(): number {
    return this.#slots.filter((slot) => slot !== undefined).length;
  }

  /** Instances running an execution now. */
  get busyCount(): number {
    return this.#busySinceNs.size;
  }

  /** Instances alive and not running an execution now. */
  get idleCount(): number {
    return this.#idle.length;
  }

  get hasIdle(): boolean {
    return this.#idle.length > 0;
  }

  /** Instances that died and were (or are being) restarted since the version loaded. */
  get restartCount(): number {
    return this.#restartCount;
  }

  /** The first idle instance, now marked busy; undefined when all are busy. */
  acquire(): BackendInstance | undefined {
    const instance = this.#idle.shift();
    if (instance !== undefined) this.#busySinceNs.set(instance, process.hrtime.bigint());
    return instance;
  }

  /** Instance slots, alive or being replaced (a sequence batcher binds its sequence slots to them). */
  get slotCount(): number {
    return this.#slots.length;
  }

  /** The instance in slot `index`, now marked busy; undefined while it is busy, dead or being replaced. */
  acquireAt(index: number): BackendInstance | undefined {
    const instance = this.#slots[index];
    const idle = instance === undefined ? -1 : this.#idle.indexOf(instance);
    if (idle < 0) return undefined;
    this.#idle.splice(idle, 1);
    this.#busySinceNs.set(instance!, process.hrtime.bigint());
    return instance;
  }

  release(instance: BackendInstance): void {
    const since = this.#busySinceNs.get(instance);
    if (since === undefined) return;
    this.#busySinceNs.delete(instance);
    this.#busyNs += process.hrtime.bigint() - since;
    // A dead instance is released by the execution it failed, and never serves again.
    if (this.#slots.includes(instance)) this.#idle.push(instance);
  }

  /** Summed busy time of all instances so far, including executions still running. */
  busySeconds(): number {
    const now = process.hrtime.bigint();
    let total = this.#busyNs;
    for (const since of this.#busySinceNs.values()) total += now - since;
    return Number(total) / 1e9;
  }

  #watch(instance: BackendInstance, index: number): void {
    void instance.lost?.then((reason) => this.#lose(instance, index, reason));
  }

  #lose(instance: BackendInstance, index: number, reason: Error): void {
    if (this.#closed || this.#slots[index] !== instance) return;
    this.#slots[index] = undefined;
    const idle = this.#idle.indexOf(instance);
    if (idle >= 0) this.#idle.splice(idle, 1);
    void instance.close();
    // Unloading: a replacement would only take the next queued request to the same end, one timeout at a time.
    if (this.#draining) {
      if (this.size === 0) this.#listener?.allDown(`the model is unloading and its last instance ended: ${reason.message}`);
      return;
    }
    const restarts = this.#restarts;
    if (restarts === undefined) return;
    this.#restartCount++;
    if (Date.now() - this.#startedAtMs[index]! >= restarts.maxBackoffMs) this.#failureStreak[index] = 0;
    const delayMs = this.#backoffMs(index);
    restarts.log.warn(`${restarts.describe(index)} died (${reason.message}); restarting it in ${delayMs} ms`);
    this.#restartAfter(index, delayMs);
  }

  #backoffMs(index: number): number {
    const restarts = this.#restarts!;
    const streak = this.#failureStreak[index]!;
    this.#failureStreak[index] = streak + 1;
    return Math.min(restarts.maxBackoffMs, restarts.initialBackoffMs * 2 ** streak);
  }

  #restartAfter(index: number, delayMs: number): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      const starting = this.#restart(index).finally(() => this.#starting.delete(starting));
      this.#starting.add(starting);
    }, delayMs);
    this.#timers.add(timer);
  }

  async #restart(index: number): Promise<void> {
    const restarts = this.#restarts!;
    let instance: BackendInstance;
    try {
      instance = await restarts.start(index);
    } catch (error) {
      if (this.#closed) return;
      const reason = error instanceof Error ? error : new Error(String(error));
      const delayMs = this.#backoffMs(index);
      restarts.log.warn(`restarting ${restarts.describe(index)} failed (${reason.message}); trying again in ${delayMs} ms`);
      if (this.size === 0) this.#listener?.allDown(`every instance of the model is down and restarting failed: ${reason.message}`);
      this.#restartAfter(index, delayMs);
      return;
    }
    if (this.#closed) {
      await instance.close();
      return;
    }
    this.#slots[index] = instance;
    this.#startedAtMs[index] = Date.now();
    this.#idle.push(instance);
    this.#watch(instance, index);
    // Restarted for a death before the unload began: bounded like the others.
    if (this.#draining) instance.draining?.();
    restarts.log.info(`restarted ${restarts.describe(index)}`);
    this.#listener?.available();
  }

  /**
   * The version began to unload: tells every instance (see {@link BackendInstance.draining}). An instance lost from
   * now on is not restarted; once none is left, what is queued fails with UNAVAILABLE.
   */
  drain(): void {
    if (this.#draining) return;
    this.#draining = true;
    for (const instance of this.#slots) instance?.draining?.();
  }

  /** Stops restarting and closes every instance, including one still starting. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    await Promise.allSettled([...this.#starting]);
    await Promise.allSettled(this.#slots.filter((slot) => slot !== undefined).map((instance) => instance.close()));
  }
}

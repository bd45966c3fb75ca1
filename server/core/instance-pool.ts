import type { BackendInstance } from "../backends/backend";

/**
 * A model version's instances. Upholds Triton's rule that an instance runs at most one execution at a time:
 * the scheduler takes an idle instance and gives it back when the execution settles. Also keeps the busy time
 * that metrics turn into an instance utilization.
 */
export class InstancePool {
  readonly #all: readonly BackendInstance[];
  readonly #idle: BackendInstance[];
  readonly #busySinceNs = new Map<BackendInstance, bigint>();
  #busyNs = 0n;

  constructor(instances: readonly BackendInstance[]) {
    this.#all = instances;
    this.#idle = [...instances];
  }

  get size(): number {
    return this.#all.length;
  }

  /** Instances running an execution now. */
  get busyCount(): number {
    return this.#all.length - this.#idle.length;
  }

  get hasIdle(): boolean {
    return this.#idle.length > 0;
  }

  /** The first idle instance, now marked busy; undefined when all are busy. */
  acquire(): BackendInstance | undefined {
    const instance = this.#idle.shift();
    if (instance !== undefined) this.#busySinceNs.set(instance, process.hrtime.bigint());
    return instance;
  }

  release(instance: BackendInstance): void {
    const since = this.#busySinceNs.get(instance);
    if (since === undefined) return;
    this.#busySinceNs.delete(instance);
    this.#busyNs += process.hrtime.bigint() - since;
    this.#idle.push(instance);
  }

  /** Summed busy time of all instances so far, including executions still running. */
  busySeconds(): number {
    const now = process.hrtime.bigint();
    let total = this.#busyNs;
    for (const since of this.#busySinceNs.values()) total += now - since;
    return Number(total) / 1e9;
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.#all.map((instance) => instance.close()));
  }
}

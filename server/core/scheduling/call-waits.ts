import type { CallLink } from "../request/inference-request";

/** A model version's instances, as the calls waiting for one see them. */
export interface WaitTarget {
  /** Names the version: `name@version`. */
  readonly key: string;
  readonly instanceCount: number;
  /** Instances executing now. */
  busyInstances(): number;
}

/** One model call in flight: what it waits for, and, once it runs, the instance that runs it. */
export interface CallWait {
  readonly target: WaitTarget;
  readonly holder: object;
  runningOn: object | undefined;
}

/** An instance whose execution made calls still in flight: it is held until they answer. */
interface BlockedInstance {
  readonly key: string;
  readonly calls: Set<CallWait>;
}

/**
 * The waits between model instances that model calls (BLS) create, across every request: an instance whose
 * execution made a call is held until the call answers, and the call waits for an instance of its target. A new call
 * that could only be answered by instances that all wait, in a cycle, on calls that cannot run (two instances of a
 * model calling itself, one request each; a fan-out deeper than the instances) would hang until its client gave up:
 * {@link wouldDeadlock} finds it when it is made, so the core can refuse it as it refuses a call too deep.
 */
export class CallWaits {
  readonly #blocked = new Map<object, BlockedInstance>();
  readonly #byChain = new WeakMap<readonly CallLink[], CallWait>();

  /** The execution on `holder` (an instance of version `holderKey`) made a call, whose request carries `chain`. */
  begin(holder: object, holderKey: string, target: WaitTarget, chain: readonly CallLink[]): CallWait {
    const wait: CallWait = { target, holder, runningOn: undefined };
    let blocked = this.#blocked.get(holder);
    if (blocked === undefined) this.#blocked.set(holder, (blocked = { key: holderKey, calls: new Set() }));
    blocked.calls.add(wait);
    this.#byChain.set(chain, wait);
    return wait;
  }

  /** The call answered (or failed): its instance no longer waits on it. */
  end(wait: CallWait): void {
    const blocked = this.#blocked.get(wait.holder);
    if (blocked === undefined) return;
    blocked.calls.delete(wait);
    if (blocked.calls.size === 0) this.#blocked.delete(wait.holder);
  }

  /** The request a call made (its `chain`) began executing on `instance`. */
  started(chain: readonly CallLink[] | undefined, instance: object): void {
    const wait = chain === undefined ? undefined : this.#byChain.get(chain);
    if (wait !== undefined) wait.runningOn = instance;
  }

  /**
   * Whether `wait` can never be answered: every instance of its target is held by an execution waiting on calls that
   * cannot run either. Computed as the least fixpoint of "can finish" over the instances that wait on calls: an
   * instance finishes once every call it made can run, and a call can run on a free instance of its target, on one
   * whose execution waits on no call, or on one that finishes.
   */
  wouldDeadlock(wait: CallWait): boolean {
    const finishing = new Set<object>();
    const canRun = (call: CallWait): boolean => {
      if (call.runningOn !== undefined) return !this.#blocked.has(call.runningOn) || finishing.has(call.runningOn);
      const { target } = call;
      const busy = target.busyInstances();
      if (target.instanceCount === 0 || busy < target.instanceCount) return true;
      let waiting = 0;
      for (const [instance, blocked] of this.#blocked) {
        if (blocked.key !== target.key) continue;
        if (finishing.has(instance)) return true;
        waiting++;
      }
      return busy > waiting;
    };
    for (let changed = true; changed;) {
      changed = false;
      for (const [instance, blocked] of this.#blocked) {
        if (finishing.has(instance) || ![...blocked.calls].every(canRun)) continue;
        finishing.add(instance);
        changed = true;
      }
    }
    return !canRun(wait);
  }
}

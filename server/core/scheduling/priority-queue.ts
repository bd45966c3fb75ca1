import { InferenceError } from "../errors";
import { type Clock, monotonicClock } from "./clock";
import { RingBuffer } from "./ring-buffer";

/** Triton's ModelQueuePolicy, in the scheduler's units. */
export interface QueuePolicy {
  readonly timeoutAction: "REJECT" | "DELAY";
  /** 0 = no timeout. */
  readonly defaultTimeoutUs: number;
  readonly allowTimeoutOverride: boolean;
  /** 0 = unbounded. */
  readonly maxQueueSize: number;
}

/** Where and until when an admitted request waits, fixed when it is admitted. */
export interface Admission {
  /** 1-based priority level. */
  readonly level: number;
  readonly enqueueNs: bigint;
  readonly enqueueUs: number;
  /** Infinity when the request never times out. */
  readonly deadlineUs: number;
}

/** A request's place in the queue, as {@link PriorityQueue.push} hands it back for {@link PriorityQueue.remove}. */
export interface Queued<T> {
  readonly value: T;
}

interface Node<T> extends Queued<T> {
  readonly level: number;
  readonly deadlineUs: number;
  /** Left the queue (taken, removed, rejected); the ring buffers drop such nodes lazily. */
  done: boolean;
  /** Timed out under a DELAY policy: now waits in the delayed queue. */
  delayed: boolean;
}

const NONE: readonly never[] = [];

/**
 * The requests a scheduler holds, in the order it serves them (Triton's PriorityQueue): a FIFO per priority level,
 * each under its own queue policy, then the requests that timed out under a DELAY policy, served only when nothing
 * else waits. It arms no timers: the scheduler asks for {@link nextDeadlineUs} and calls {@link expire}.
 * Values are the caller's own objects, each queued at most once.
 */
export class PriorityQueue<T> {
  readonly #levels: readonly QueuePolicy[];
  readonly #defaultLevel: number;
  readonly #clock: Clock;
  readonly #queues: RingBuffer<Node<T>>[];
  readonly #delayed = new RingBuffer<Node<T>>();
  /** Priority levels from the highest, then the delayed queue: the order requests are served in. */
  readonly #serviceOrder: readonly RingBuffer<Node<T>>[];
  readonly #liveByLevel: number[];
  #live = 0;
  #delayedCount = 0;
  #withDeadline = 0;

  /** `levels[0]` is priority level 1, the highest; `defaultLevel` (1-based) serves priority 0. */
  constructor(levels: readonly QueuePolicy[], defaultLevel: number, clock: Clock = monotonicClock) {
    this.#levels = levels;
    this.#defaultLevel = defaultLevel;
    this.#clock = clock;
    this.#queues = levels.map(() => new RingBuffer<Node<T>>());
    this.#serviceOrder = [...this.#queues, this.#delayed];
    this.#liveByLevel = levels.map(() => 0);
  }

  /** Requests waiting, delayed ones included. */
  get length(): number {
    return this.#live + this.#delayedCount;
  }

  /** Requests waiting in their priority level (not yet timed out into the delayed queue). */
  get undelayedLength(): number {
    return this.#live;
  }

  /**
   * Places a request with Triton's `priority` (0 = default) and `timeout` (µs, 0 = none) parameters, or refuses
   * it: a priority the model lacks, or a full level. The timeout applies where the policy allows overriding and it
   * is shorter than the policy's. Queue the request with {@link push} before the clock moves on.
   */
  admit(priority = 0, timeoutUs = 0): Admission | InferenceError {
    const levels = this.#levels;
    if (!Number.isInteger(priority) || priority < 0 || priority > levels.length) {
      return new InferenceError("INVALID_ARG", `priority ${priority} is out of range: the model has ${levels.length} priority level(s)`);
    }
    const level = priority === 0 ? this.#defaultLevel : priority;
    const policy = levels[level - 1]!;
    if (policy.maxQueueSize > 0 && this.#liveByLevel[level - 1]! >= policy.maxQueueSize) {
      return new InferenceError("UNAVAILABLE", "Exceeds maximum queue size");
    }
    let effectiveUs = policy.defaultTimeoutUs;
    if (policy.allowTimeoutOverride && timeoutUs > 0 && (effectiveUs === 0 || timeoutUs < effectiveUs)) effectiveUs = timeoutUs;
    const enqueueNs = this.#clock.now();
    const enqueueUs = Number(enqueueNs / 1000n);
    return { level, enqueueNs, enqueueUs, deadlineUs: effectiveUs > 0 ? enqueueUs + effectiveUs : Infinity };
  }

  push(value: T, admission: Admission): Queued<T> {
    const node: Node<T> = { value, level: admission.level, deadlineUs: admission.deadlineUs, done: false, delayed: false };
    if (node.deadlineUs !== Infinity) this.#withDeadline++;
    this.#queues[node.level - 1]!.push(node);
    this.#liveByLevel[node.level - 1]!++;
    this.#live++;
    return node;
  }

  /** Takes a waiting request out of the queue (a cancelled one); false when it no longer waits. */
  remove(queued: Queued<T>): boolean {
    const node = queued as Node<T>;
    if (node.done) return false;
    this.#forget(node);
    return true;
  }

  /**
   * Applies the queue policies at `nowUs`: a request past its deadline leaves the queue under REJECT (returned,
   * for the caller to fail) and moves behind everything else under DELAY.
   */
  expire(nowUs: number = Number(this.#clock.now() / 1000n)): readonly T[] {
    if (this.#withDeadline === 0) return NONE;
    const rejected: T[] = [];
    for (const queue of this.#queues) {
      queue.retain((node) => {
        if (node.done) return false;
        if (node.deadlineUs > nowUs) return true;
        if (this.#levels[node.level - 1]!.timeoutAction === "REJECT") {
          this.#forget(node);
          rejected.push(node.value);
        } else {
          this.#withDeadline--;
          this.#liveByLevel[node.level - 1]!--;
          this.#live--;
          this.#delayedCount++;
          node.delayed = true;
          this.#delayed.push(node);
        }
        return false;
      });
    }
    return rejected;
  }

  /** The earliest deadline of a waiting request, µs; Infinity when none has one. */
  nextDeadlineUs(): number {
    if (this.#withDeadline === 0) return Infinity;
    let earliest = Infinity;
    for (const queue of this.#queues) {
      for (let i = 0; i < queue.length; i++) {
        const node = queue.at(i)!;
        if (!node.done && node.deadlineUs < earliest) earliest = node.deadlineUs;
      }
    }
    return earliest;
  }

  /** Up to `limit` waiting requests in service order, left in the queue. */
  head(limit: number): T[] {
    const view: T[] = [];
    for (const queue of this.#serviceOrder) {
      while (queue.length > 0 && queue.at(0)!.done) queue.shift();
      for (let i = 0; i < queue.length && view.length < limit; i++) {
        const node = queue.at(i)!;
        if (!node.done) view.push(node.value);
      }
      if (view.length >= limit) break;
    }
    return view;
  }

  /** Takes the first `count` waiting requests in service order. */
  take(count: number): T[] {
    const taken: T[] = [];
    for (const queue of this.#serviceOrder) {
      while (taken.length < count && queue.length > 0) {
        const node = queue.shift()!;
        if (node.done) continue;
        this.#forget(node);
        taken.push(node.value);
      }
    }
    return taken;
  }

  /** Takes every waiting request, in service order. */
  drain(): T[] {
    return this.take(Infinity);
  }

  #forget(node: Node<T>): void {
    node.done = true;
    if (node.delayed) {
      this.#delayedCount--;
    } else {
      this.#liveByLevel[node.level - 1]!--;
      this.#live--;
      if (node.deadlineUs !== Infinity) this.#withDeadline--;
    }
  }
}

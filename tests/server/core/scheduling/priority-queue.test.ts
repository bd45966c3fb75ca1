import { describe, expect, it } from "vitest";
import { InferenceError } from "../../../../server/core/errors";
import type { Clock } from "../../../../server/core/scheduling/clock";
import { PriorityQueue, type Queued, type QueuePolicy } from "../../../../server/core/scheduling/priority-queue";

/** A clock that moves only when told to, in µs. */
class ManualClock implements Clock {
  #ns = 1_000_000_000n;
  now(): bigint {
    return this.#ns;
  }
  get us(): number {
    return Number(this.#ns / 1000n);
  }
  advanceUs(us: number): void {
    this.#ns += BigInt(us) * 1000n;
  }
}

const policy = (overrides: Partial<QueuePolicy> = {}): QueuePolicy => ({
  timeoutAction: "REJECT", defaultTimeoutUs: 0, allowTimeoutOverride: false, maxQueueSize: 0, ...overrides,
});

/** A queue of names, with each name admitted and pushed in one step as a scheduler does. */
function queueOf(levels: readonly QueuePolicy[], defaultLevel = 1) {
  const clock = new ManualClock();
  const queue = new PriorityQueue<{ readonly name: string }>(levels, defaultLevel, clock);
  const items = new Map<string, Queued<{ readonly name: string }>>();
  const add = (name: string, priority?: number, timeoutUs?: number): InferenceError | undefined => {
    const admission = queue.admit(priority, timeoutUs);
    if (admission instanceof InferenceError) return admission;
    items.set(name, queue.push({ name }, admission));
    return undefined;
  };
  const names = (values: readonly { readonly name: string }[]): string[] => values.map((value) => value.name);
  return { clock, queue, add, names, item: (name: string) => items.get(name)! };
}

describe("PriorityQueue", () => {
  it("serves higher priority levels first and each level first in, first out", () => {
    const { queue, add, names } = queueOf([policy(), policy(), policy()]);
    add("low-1", 3);
    add("mid-1", 2);
    add("high-1", 1);
    add("low-2", 3);
    add("high-2", 1);
    add("mid-2", 2);
    expect(names(queue.head(10))).toEqual(["high-1", "high-2", "mid-1", "mid-2", "low-1", "low-2"]);
    expect(names(queue.take(3))).toEqual(["high-1", "high-2", "mid-1"]);
    expect(names(queue.take(10))).toEqual(["mid-2", "low-1", "low-2"]);
    expect(queue.length).toBe(0);
  });

  it("looks at the head without taking it, up to the limit", () => {
    const { queue, add, names } = queueOf([policy()]);
    for (const name of ["a", "b", "c"]) add(name);
    expect(names(queue.head(2))).toEqual(["a", "b"]);
    expect(queue.length).toBe(3);
  });

  it("puts priority 0 on the default level", () => {
    const { queue, add, names } = queueOf([policy(), policy(), policy()], 2);
    add("low", 3);
    add("default");
    add("high", 1);
    expect(queue.admit(0)).toMatchObject({ level: 2 });
    expect(names(queue.take(3))).toEqual(["high", "default", "low"]);
  });

  it("refuses a priority the model lacks", () => {
    const { queue } = queueOf([policy(), policy()]);
    for (const priority of [3, -1, 1.5]) {
      const refused = queue.admit(priority);
      expect(refused).toBeInstanceOf(InferenceError);
      expect(refused).toMatchObject({ code: "INVALID_ARG", message: `priority ${priority} is out of range: the model has 2 priority level(s)` });
    }
  });

  it("refuses a request when its level holds max_queue_size requests, and admits it again once one leaves", () => {
    const { queue, add, names } = queueOf([policy({ maxQueueSize: 2 }), policy()]);
    expect(add("a", 1)).toBeUndefined();
    expect(add("b", 1)).toBeUndefined();
    expect(add("c", 1)).toMatchObject({ code: "UNAVAILABLE", message: "Exceeds maximum queue size" });
    expect(add("other-level", 2)).toBeUndefined();
    expect(names(queue.take(1))).toEqual(["a"]);
    expect(add("c", 1)).toBeUndefined();
    expect(names(queue.take(10))).toEqual(["b", "c", "other-level"]);
  });

  it("rejects a request past its timeout under REJECT and keeps the others in order", () => {
    const { clock, queue, add, names } = queueOf([policy({ defaultTimeoutUs: 100 })]);
    add("old");
    clock.advanceUs(60);
    add("new");
    expect(queue.nextDeadlineUs()).toBe(clock.us + 40);
    clock.advanceUs(39);
    expect(queue.expire()).toEqual([]);
    clock.advanceUs(1);
    expect(names(queue.expire())).toEqual(["old"]); // at its deadline
    expect(queue.length).toBe(1);
    expect(queue.nextDeadlineUs()).toBe(clock.us + 60);
    expect(names(queue.take(10))).toEqual(["new"]);
    expect(queue.nextDeadlineUs()).toBe(Infinity);
  });

  it("moves a request past its timeout under DELAY behind every level, still counted as waiting", () => {
    const { clock, queue, add, names } = queueOf([policy(), policy({ timeoutAction: "DELAY", defaultTimeoutUs: 100 })]);
    add("slow", 2);
    add("late", 2);
    clock.advanceUs(101);
    add("fresh", 2);
    add("urgent", 1);
    expect(queue.expire()).toEqual([]);
    expect(queue.length).toBe(4);
    expect(queue.undelayedLength).toBe(2);
    expect(names(queue.head(10))).toEqual(["urgent", "fresh", "slow", "late"]);
    expect(queue.nextDeadlineUs()).toBe(clock.us + 100);
    expect(names(queue.take(10))).toEqual(["urgent", "fresh", "slow", "late"]);
  });

  it("lets a request shorten its level's timeout where the policy allows it, never lengthen it", () => {
    const { clock, queue, add, names } = queueOf([
      policy({ defaultTimeoutUs: 100, allowTimeoutOverride: true }), policy({ defaultTimeoutUs: 100 }), policy({ allowTimeoutOverride: true }),
    ]);
    add("shortened", 1, 10);
    add("not-lengthened", 1, 1000);
    add("not-allowed", 2, 10);
    add("set", 3, 50);
    clock.advanceUs(11);
    expect(names(queue.expire())).toEqual(["shortened"]);
    clock.advanceUs(40);
    expect(names(queue.expire())).toEqual(["set"]);
    clock.advanceUs(50);
    expect(names(queue.expire())).toEqual(["not-lengthened", "not-allowed"]);
  });

  it("removes a waiting request once: it is never served, and frees its place", () => {
    const { clock, queue, add, names, item } = queueOf([policy({ maxQueueSize: 2, defaultTimeoutUs: 100 })]);
    add("a");
    add("b");
    expect(queue.remove(item("a"))).toBe(true);
    expect(queue.remove(item("a"))).toBe(false);
    expect(add("c")).toBeUndefined();
    expect(names(queue.head(10))).toEqual(["b", "c"]);
    clock.advanceUs(101);
    expect(names(queue.expire())).toEqual(["b", "c"]);
    expect(queue.remove(item("b"))).toBe(false);
  });

  it("drains every waiting request in service order, delayed ones last", () => {
    const { clock, queue, add, names } = queueOf([policy({ timeoutAction: "DELAY", defaultTimeoutUs: 10 }), policy()]);
    add("delayed", 1);
    clock.advanceUs(11);
    queue.expire();
    add("low", 2);
    add("high", 1);
    expect(names(queue.drain())).toEqual(["high", "low", "delayed"]);
    expect(queue.length).toBe(0);
    expect(queue.head(10)).toEqual([]);
  });

  it("stamps each admission with the clock's time", () => {
    const { clock, queue } = queueOf([policy({ defaultTimeoutUs: 5 })]);
    expect(queue.admit()).toEqual({ level: 1, enqueueNs: clock.now(), enqueueUs: clock.us, deadlineUs: clock.us + 5 });
  });
});

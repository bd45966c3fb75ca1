import { describe, expect, it } from "vitest";
import { type BatchPolicy, decide, type PendingView } from "../../../../server/core/scheduling/batcher";

const policy = (p: Partial<BatchPolicy> = {}): BatchPolicy => ({ maxBatchSize: 8, preferredBatchSizes: [], maxQueueDelayUs: 0, ...p });
const pending = (...sizes: number[]): PendingView[] => sizes.map((batchSize, i) => ({ batchSize, shapeKey: "a", enqueueUs: 1000 + i }));

/** The configuration of Triton's qa/L0_batcher models: max_batch_size 8, preferred [2, 6], a 10 s queue delay. */
const l0 = policy({ preferredBatchSizes: [2, 6], maxQueueDelayUs: 10_000_000 });
const DELAY_OVER = 1000 + 10_000_000;

describe("decide(): the dynamic batcher's pure decision", () => {
  it.each([
    { name: "empty queue is idle", queue: [], now: 0, p: policy(), want: { kind: "idle" } },
    { name: "no delay: send everything that fits now", queue: pending(1, 1, 1), now: 1000, p: policy(), want: { kind: "send", count: 3 } },
    { name: "stops at max_batch_size", queue: pending(3, 3, 3), now: 1000, p: policy(), want: { kind: "send", count: 2 } },
    { name: "multi-element requests count as several", queue: pending(4, 4), now: 1000, p: policy(), want: { kind: "send", count: 2 } },
    { name: "a full batch goes at once even with a delay", queue: pending(4, 4), now: 1000, p: policy({ maxQueueDelayUs: 10_000 }), want: { kind: "send", count: 2 } },
    { name: "no preferred sizes: waits for max_batch_size (Triton's default preferred size)", queue: pending(1, 1), now: 1300, p: policy({ maxQueueDelayUs: 1000 }), want: { kind: "wait", us: 700 } },
    { name: "delay expired: sends what it has", queue: pending(1, 1), now: 2000, p: policy({ maxQueueDelayUs: 1000 }), want: { kind: "send", count: 2 } },
    { name: "next request would overflow max_batch_size: send without waiting", queue: pending(6, 4), now: 1000, p: policy({ maxQueueDelayUs: 10_000 }), want: { kind: "send", count: 1 } },
    { name: "no batching (max 1): one request at a time", queue: pending(1, 1), now: 1000, p: policy({ maxBatchSize: 1 }), want: { kind: "send", count: 1 } },
    { name: "a request with more elements than a no-batching max still runs alone", queue: pending(5, 1), now: 1000, p: policy({ maxBatchSize: 1 }), want: { kind: "send", count: 1 } },
    // Triton's qa/L0_batcher/batcher_test.py scenarios, on its models' configuration.
    { name: "static_batch_preferred: a request of 2 goes at once", queue: pending(2), now: 1000, p: l0, want: { kind: "send", count: 1 } },
    { name: "static_batch_preferred: a request of 6 goes at once", queue: pending(6), now: 1000, p: l0, want: { kind: "send", count: 1 } },
    { name: "static_batch_lt_any_preferred: a request of 1 waits the delay", queue: pending(1), now: 1000, p: l0, want: { kind: "wait", us: 10_000_000 } },
    { name: "static_batch_lt_any_preferred: ... and goes when it is over", queue: pending(1), now: DELAY_OVER, p: l0, want: { kind: "send", count: 1 } },
    { name: "static_batch_not_preferred: a request of 3 waits", queue: pending(3), now: 5000, p: l0, want: { kind: "wait", us: 10_000_000 - 4000 } },
    { name: "static_batch_gt_max_preferred: a request of 7 goes at once", queue: pending(7), now: 1000, p: l0, want: { kind: "send", count: 1 } },
    { name: "multi_batch_preferred: 1 + 1 make preferred 2 and go at once", queue: pending(1, 1), now: 1001, p: l0, want: { kind: "send", count: 2 } },
    { name: "multi_batch_not_preferred: 1 + 2 = 3 waits", queue: pending(1, 2), now: 1001, p: l0, want: { kind: "wait", us: 10_000_000 - 1 } },
    { name: "multi_batch_use_best_preferred: 1 + 1 + 1 sends the preferred 2, the third waits", queue: pending(1, 1, 1), now: 1002, p: l0, want: { kind: "send", count: 2 } },
    { name: "multi_batch_use_biggest_preferred: six of 1 make preferred 6", queue: pending(1, 1, 1, 1, 1, 1), now: 1005, p: l0, want: { kind: "send", count: 6 } },
    { name: "multi_batch_use_biggest_preferred: a seventh does not join", queue: pending(1, 1, 1, 1, 1, 1, 1), now: 1006, p: l0, want: { kind: "send", count: 6 } },
    { name: "multi_batch_sum_gt_max_preferred: 3 then 4 (7 > 6): the 3 goes alone at once", queue: pending(3, 4), now: 1001, p: l0, want: { kind: "send", count: 1 } },
    { name: "multi_batch_sum_gt_max_preferred: the 4 alone then waits", queue: pending(4), now: 1001, p: l0, want: { kind: "wait", us: 10_000_000 - 1 } },
    { name: "multi_batch_gt_max_preferred: 3 then 7 (> max_batch_size): the 3 goes alone at once", queue: pending(3, 7), now: 1001, p: l0, want: { kind: "send", count: 1 } },
    { name: "preferred 2 reached inside 2 + 3: sends the 2 only", queue: pending(2, 3), now: 1001, p: l0, want: { kind: "send", count: 1 } },
    { name: "delay over: the whole batch, past the preferred mark", queue: pending(1, 1, 1), now: DELAY_OVER, p: l0, want: { kind: "send", count: 3 } },
    { name: "delay over with 3 + 4: sends all 7 (Triton: the delay outranks the preferred sizes)", queue: pending(3, 4), now: DELAY_OVER, p: l0, want: { kind: "send", count: 2 } },
    { name: "zero delay still prefers a preferred size", queue: pending(1, 1, 1), now: 1002, p: policy({ preferredBatchSizes: [2, 6] }), want: { kind: "send", count: 2 } },
    { name: "zero delay, no preferred size formed: sends what it has", queue: pending(1, 2), now: 1002, p: policy({ preferredBatchSizes: [2, 6] }), want: { kind: "send", count: 2 } },
  ])("$name", ({ queue, now, p, want }) => {
    expect(decide(queue, now, p)).toEqual(want);
  });

  it("multiple shapes: never batches requests whose non-batch shapes differ (multi_batch_different_shape)", () => {
    const queue: PendingView[] = [
      { batchSize: 1, shapeKey: "x:16", enqueueUs: 0 },
      { batchSize: 1, shapeKey: "x:8", enqueueUs: 1 },
    ];
    // 1 + 1 would be preferred, but the shapes differ: the first goes alone at once, the second waits the delay.
    expect(decide(queue, 10, l0)).toEqual({ kind: "send", count: 1 });
    expect(decide(queue.slice(1), 10, l0)).toEqual({ kind: "wait", us: 10_000_000 - 9 });
  });

  it("measures the delay from the oldest request in the batch, not the head (a higher priority may arrive later)", () => {
    const queue: PendingView[] = [
      { batchSize: 1, shapeKey: "a", enqueueUs: 5000 }, // priority 1, arrived last
      { batchSize: 2, shapeKey: "a", enqueueUs: 1000 },
    ];
    expect(decide(queue, 6000, l0)).toEqual({ kind: "wait", us: 10_000_000 - 5000 });
  });

  it("follows a fake clock through a scenario: wait, then send when the delay is over", () => {
    const p = policy({ preferredBatchSizes: [4], maxQueueDelayUs: 100 });
    const queue = pending(1, 1);
    let now = 1001;
    const first = decide(queue, now, p);
    expect(first).toEqual({ kind: "wait", us: 99 });
    now += first.kind === "wait" ? first.us : 0;
    expect(decide(queue, now, p)).toEqual({ kind: "send", count: 2 });
    expect(decide(pending(1, 1, 1, 1), 1003, p)).toEqual({ kind: "send", count: 4 });
  });
});

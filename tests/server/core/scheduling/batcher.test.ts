import { describe, expect, it } from "vitest";
import { type BatchPolicy, decide, type PendingView } from "../../../../server/core/scheduling/batcher";

const policy = (p: Partial<BatchPolicy> = {}): BatchPolicy => ({ maxBatchSize: 8, preferredBatchSizes: [], maxQueueDelayUs: 0, ...p });
const pending = (...sizes: number[]): PendingView[] => sizes.map((batchSize, i) => ({ batchSize, shapeKey: "a", enqueueUs: 1000 + i }));

describe("decide(): the dynamic batcher's pure decision", () => {
  it.each([
    { name: "empty queue is idle", queue: [], now: 0, p: policy(), want: { kind: "idle" } },
    { name: "no delay: send everything that fits now", queue: pending(1, 1, 1), now: 1000, p: policy(), want: { kind: "send", count: 3 } },
    { name: "stops at max_batch_size", queue: pending(3, 3, 3), now: 1000, p: policy(), want: { kind: "send", count: 2 } },
    { name: "multi-element requests count as several", queue: pending(4, 4), now: 1000, p: policy(), want: { kind: "send", count: 2 } },
    { name: "a full batch goes at once even with a delay", queue: pending(4, 4), now: 1000, p: policy({ maxQueueDelayUs: 10_000 }), want: { kind: "send", count: 2 } },
    { name: "waits for the rest of the delay", queue: pending(1, 1), now: 1300, p: policy({ maxQueueDelayUs: 1000 }), want: { kind: "wait", us: 700 } },
    { name: "delay expired: sends what it has", queue: pending(1, 1), now: 2000, p: policy({ maxQueueDelayUs: 1000 }), want: { kind: "send", count: 2 } },
    { name: "next request would overflow: send without waiting", queue: pending(6, 4), now: 1000, p: policy({ maxQueueDelayUs: 10_000 }), want: { kind: "send", count: 1 } },
    { name: "largest preferred size reached: send it", queue: pending(1, 1, 1, 1), now: 1000, p: policy({ maxQueueDelayUs: 10_000, preferredBatchSizes: [2, 4] }), want: { kind: "send", count: 4 } },
    { name: "below the largest preferred size: wait", queue: pending(1, 1, 1), now: 1000, p: policy({ maxQueueDelayUs: 10_000, preferredBatchSizes: [2, 4] }), want: { kind: "wait", us: 10_000 } },
    { name: "delay expired: fall back to the largest preferred prefix", queue: pending(1, 1, 1), now: 20_000, p: policy({ maxQueueDelayUs: 10_000, preferredBatchSizes: [2, 4] }), want: { kind: "send", count: 2 } },
    { name: "delay expired, no preferred prefix: send all", queue: pending(3), now: 20_000, p: policy({ maxQueueDelayUs: 10_000, preferredBatchSizes: [2, 4] }), want: { kind: "send", count: 1 } },
    { name: "no batching (max 1): one request at a time", queue: pending(1, 1), now: 1000, p: policy({ maxBatchSize: 1 }), want: { kind: "send", count: 1 } },
    { name: "a request with more elements than a no-batching max still runs alone", queue: pending(5, 1), now: 1000, p: policy({ maxBatchSize: 1 }), want: { kind: "send", count: 1 } },
  ])("$name", ({ queue, now, p, want }) => {
    expect(decide(queue, now, p)).toEqual(want);
  });

  it("never batches requests whose non-batch shapes differ", () => {
    const queue: PendingView[] = [
      { batchSize: 1, shapeKey: "x:16", enqueueUs: 0 },
      { batchSize: 1, shapeKey: "x:16", enqueueUs: 1 },
      { batchSize: 1, shapeKey: "x:32", enqueueUs: 2 },
    ];
    expect(decide(queue, 0, policy({ maxQueueDelayUs: 10_000 }))).toEqual({ kind: "send", count: 2 });
    expect(decide(queue.slice(2), 0, policy())).toEqual({ kind: "send", count: 1 });
  });
});

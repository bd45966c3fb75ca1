/**
 * The dynamic batcher's decision, as a pure function of the queue and the clock (Triton's GetDynamicBatch: "send
 * now, or wait N µs"). No timers and no I/O here: the scheduler owns those and calls this whenever the queue
 * changes, a timer fires, or an instance becomes idle.
 */

/** What the batcher needs to know about one queued request. */
export interface PendingView {
  /** Batch elements this request contributes (its first dimension when the model batches, else 1). */
  readonly batchSize: number;
  /** Requests batch together only when every input has the same non-batch dimensions. */
  readonly shapeKey: string;
  readonly enqueueUs: number;
}

export interface BatchPolicy {
  /** Largest batch to form; 1 means one request per execution (no dynamic batching). */
  readonly maxBatchSize: number;
  readonly preferredBatchSizes: readonly number[];
  readonly maxQueueDelayUs: number;
}

export type BatchDecision =
  | { readonly kind: "send"; readonly count: number }
  | { readonly kind: "wait"; readonly us: number }
  | { readonly kind: "idle" };

/**
 * Decides how many requests from the head of `pending` (already in priority, then arrival, order) to execute
 * together. A request larger than `maxBatchSize` on its own is still sent alone: validation rejected those that
 * exceed the model's max_batch_size, and a request is never split.
 */
export function decide(pending: readonly PendingView[], nowUs: number, policy: BatchPolicy): BatchDecision {
  const head = pending[0];
  if (head === undefined) return { kind: "idle" };

  let count = 0;
  let size = 0;
  // Batch sizes reached after each request is added, to fall back on a preferred size when the delay expires.
  const sizes: number[] = [];
  for (const request of pending) {
    if (request.shapeKey !== head.shapeKey || (count > 0 && size + request.batchSize > policy.maxBatchSize)) break;
    count++;
    size += request.batchSize;
    sizes.push(size);
    if (size >= policy.maxBatchSize) break;
  }

  const blocked = count < pending.length; // the next request cannot join this batch
  if (size >= policy.maxBatchSize || blocked || policy.maxBatchSize <= 1) return { kind: "send", count };

  const largestPreferred = policy.preferredBatchSizes.length > 0 ? Math.max(...policy.preferredBatchSizes) : undefined;
  if (largestPreferred !== undefined && size >= largestPreferred) {
    return { kind: "send", count: preferredPrefix(sizes, policy.preferredBatchSizes) ?? count };
  }
  if (policy.maxQueueDelayUs <= 0) return { kind: "send", count };

  const waitedUs = nowUs - head.enqueueUs;
  if (waitedUs >= policy.maxQueueDelayUs) {
    return { kind: "send", count: preferredPrefix(sizes, policy.preferredBatchSizes) ?? count };
  }
  return { kind: "wait", us: policy.maxQueueDelayUs - waitedUs };
}

/** The longest prefix whose batch size is one of the preferred sizes, as a request count. */
function preferredPrefix(sizes: readonly number[], preferred: readonly number[]): number | undefined {
  for (let i = sizes.length - 1; i >= 0; i--) {
    if (preferred.includes(sizes[i] as number)) return i + 1;
  }
  return undefined;
}

/**
 * The dynamic batcher's decision, as a pure function of the queue and the clock (Triton's GetDynamicBatch in
 * triton-inference-server/core src/dynamic_batch_scheduler.cc: "send now, or wait N µs"). No timers and no I/O
 * here: the scheduler owns those and calls this whenever the queue changes, a timer fires, or an instance becomes
 * idle (Triton too only looks for a batch while a payload slot is free).
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
  /** Empty means `[maxBatchSize]`, as Triton's NormalizeModelConfig (model_config_utils.cc) fills it. */
  readonly preferredBatchSizes: readonly number[];
  readonly maxQueueDelayUs: number;
}

export type BatchDecision =
  | { readonly kind: "send"; readonly count: number }
  | { readonly kind: "wait"; readonly us: number }
  | { readonly kind: "idle" };

/**
 * Decides how many requests from the head of `pending` (already in priority, then arrival, order) to execute
 * together, by Triton's rule:
 * - walking the queue, the batch grows while the next request fits `maxBatchSize` and has the same shape;
 * - the last point where the batch size was a preferred size is remembered, and so is the point just before a
 *   request would take the batch past the largest preferred size (a request is never split);
 * - while the oldest request in the batch has waited less than the queue delay, such a remembered point is sent at
 *   once; otherwise the batch is sent whole when it cannot grow (next request does not fit, other shape, or it
 *   reached the largest preferred size), or when the delay is over or zero; else wait for the rest of the delay.
 * A request larger than `maxBatchSize` on its own is still sent alone: validation refused those that exceed the
 * model's max_batch_size. Triton may also grow a batch already handed to a busy instance; ours dispatch to an
 * idle one at once, so the pending batch always starts empty.
 */
export function decide(pending: readonly PendingView[], nowUs: number, policy: BatchPolicy): BatchDecision {
  const head = pending[0];
  if (head === undefined) return { kind: "idle" };
  if (policy.maxBatchSize <= 1) return { kind: "send", count: 1 };

  const preferred = policy.preferredBatchSizes.length > 0 ? policy.preferredBatchSizes : [policy.maxBatchSize];
  const maxPreferred = Math.max(...preferred);
  let count = 0;
  let size = 0;
  let oldestUs = head.enqueueUs;
  let markedCount = 0; // requests up to Triton's marked cursor (a preferred size, or the largest that fits one)
  let sendNow = false;
  for (const request of pending) {
    const batchSize = Math.max(1, request.batchSize);
    if (count > 0) {
      if (size + batchSize > maxPreferred && markedCount === 0) markedCount = count;
      if (size + batchSize > policy.maxBatchSize || request.shapeKey !== head.shapeKey) {
        sendNow = true;
        break;
      }
    }
    count++;
    size += batchSize;
    oldestUs = Math.min(oldestUs, request.enqueueUs);
    if (preferred.includes(size)) markedCount = count;
  }

  const waitedUs = nowUs - oldestUs;
  const delayExceeded = policy.maxQueueDelayUs > 0 && waitedUs >= policy.maxQueueDelayUs;
  if (markedCount > 0 && !delayExceeded) return { kind: "send", count: markedCount };
  if (sendNow || size >= maxPreferred || delayExceeded || policy.maxQueueDelayUs <= 0) return { kind: "send", count };
  return { kind: "wait", us: policy.maxQueueDelayUs - waitedUs };
}

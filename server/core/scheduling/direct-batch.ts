/**
 * The Direct strategy's batch, as a pure function of one instance's slots and the clock (Triton's
 * DirectSequenceBatch::BatcherThread in triton-inference-server/core
 * src/sequence_batch_scheduler/sequence_batch_scheduler.cc): batch position i is slot i, from slot 0 up to the
 * highest slot with a queued request; a slot with nothing queued (or whose request cannot share the batch's
 * shapes) runs a "null" request - a copy of another request's inputs with READY false - so that every sequence
 * stays in its own position.
 */

export interface DirectPolicy {
  /** `direct.max_queue_delay_microseconds`. */
  readonly maxQueueDelayUs: number;
  /** `direct.minimum_slot_utilization`: with a delay, the share of slots that must be ready to send at once. */
  readonly minimumSlotUtilization: number;
  /** Slots per instance (Triton divides the ready count by max_batch_size). */
  readonly slotCount: number;
}

/** What the decision needs of one slot's next request. */
export interface SlotHead {
  readonly shapeKey: string;
  readonly enqueueUs: number;
}

export type DirectDecision =
  | { readonly kind: "idle" }
  | { readonly kind: "wait"; readonly us: number }
  /** Per batch position (= slot index): the slot's head request runs, or a null request fills the position. */
  | { readonly kind: "send"; readonly positions: readonly ("request" | "null")[] };

/** `heads[i]` is slot i's next request, undefined when its queue is empty. */
export function directBatch(heads: readonly (SlotHead | undefined)[], nowUs: number, policy: DirectPolicy): DirectDecision {
  let last = -1;
  let ready = 0;
  let oldestUs = Infinity;
  let shapeKey: string | undefined;
  heads.forEach((head, i) => {
    if (head === undefined) return;
    last = i;
    ready++;
    oldestUs = Math.min(oldestUs, head.enqueueUs);
    shapeKey ??= head.shapeKey;
  });
  if (last < 0) return { kind: "idle" };
  if (policy.maxQueueDelayUs > 0 && policy.minimumSlotUtilization > 0) {
    const waitedUs = nowUs - oldestUs;
    if (waitedUs <= policy.maxQueueDelayUs && ready / policy.slotCount < policy.minimumSlotUtilization) {
      return { kind: "wait", us: policy.maxQueueDelayUs - waitedUs + 1 };
    }
  }
  const positions = heads.slice(0, last + 1).map((head) => (head !== undefined && head.shapeKey === shapeKey ? "request" : "null"));
  return { kind: "send", positions };
}

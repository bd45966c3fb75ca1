/**
 * The sequence batcher's bookkeeping, as Triton's SequenceBatchScheduler keeps it (triton-inference-server/core
 * src/sequence_batch_scheduler/sequence_batch_scheduler.cc: Enqueue, ReleaseSequenceSlot, ReaperThread): every
 * model instance has a fixed number of sequence slots; a starting sequence takes the free slot with the lowest
 * index (Triton's BatcherSequenceSlotCompare), or waits in a backlog when none is free; a slot freed by END or by
 * the idle timeout goes to the oldest backlogged sequence, whose queued requests move into it. Pure: no timers,
 * no I/O, the clock is passed in.
 */

/** One sequence slot of one instance, and the requests of the sequence holding it. */
export interface SequenceSlot<T> {
  readonly instance: number;
  readonly index: number;
  /** The sequence holding the slot; undefined while it is free. */
  sequence: string | undefined;
  /** Its requests not yet executing, in arrival order. */
  readonly queue: T[];
  /** Oldest strategy: one of its requests is executing (the next waits for it). */
  inFlight: boolean;
  /** The sequence ended (END seen, or idle timeout): the slot frees once its queue has run. */
  ending: boolean;
}

interface Backlog<T> {
  readonly sequence: string;
  readonly queue: T[];
  /** The backlog holds its sequence's END: no more requests join it. */
  ended: boolean;
  /** When its requests fail unless it got a slot: the earliest of its requests' `timeout`s (Infinity: none). */
  expiresUs: number;
}

export type Admission<T> =
  | { readonly kind: "slot"; readonly slot: SequenceSlot<T> }
  | { readonly kind: "backlog" }
  | { readonly kind: "not-started" };

export class SequenceSlots<T> {
  /** Per instance, its slots by index. */
  readonly slots: readonly (readonly SequenceSlot<T>[])[];
  readonly #free: SequenceSlot<T>[] = [];
  readonly #bySequence = new Map<string, SequenceSlot<T>>();
  readonly #backlog: Backlog<T>[] = [];
  readonly #backlogBySequence = new Map<string, Backlog<T>>();
  /** When each known sequence last sent a request (Triton's correlation_id_timestamps_). */
  readonly #lastSeenUs = new Map<string, number>();
  readonly #idleUs: number;

  constructor(instanceCount: number, slotsPerInstance: number, idleUs: number) {
    this.#idleUs = idleUs;
    this.slots = Array.from({ length: instanceCount }, (_, instance) => Array.from({ length: slotsPerInstance }, (_, index) => ({
      instance, index, sequence: undefined, queue: [] as T[], inFlight: false, ending: false,
    })));
    for (const perInstance of this.slots) this.#free.push(...perInstance);
    this.#sortFree();
  }

  /** Sequences waiting for a slot. */
  get backlogLength(): number {
    return this.#backlog.length;
  }

  /**
   * Places one request of `sequence`: into its slot's queue, its backlog, a free slot (a START), or a new backlog
   * (a START with no free slot). A request of an unknown sequence without START is refused ("not-started"). A
   * START for a sequence still in progress continues in its slot or backlog, as Triton's (which logs a conflict).
   * A request with a `timeoutUs` (not 0) bounds how long its backlog may wait for a slot.
   */
  admit(sequence: string, start: boolean, end: boolean, item: T, nowUs: number, timeoutUs = 0): Admission<T> {
    const slot = this.#bySequence.get(sequence);
    const backlog = this.#backlogBySequence.get(sequence);
    if (!start && slot === undefined && backlog === undefined) return { kind: "not-started" };
    this.#lastSeenUs.set(sequence, nowUs);
    if (slot !== undefined) {
      slot.queue.push(item);
      if (end) this.#endSequence(slot);
      return { kind: "slot", slot };
    }
    const expiresUs = timeoutUs > 0 ? nowUs + timeoutUs : Infinity;
    if (backlog !== undefined) {
      backlog.expiresUs = Math.min(backlog.expiresUs, expiresUs);
      backlog.queue.push(item);
      if (end) this.#endBacklog(backlog);
      return { kind: "backlog" };
    }
    const free = this.#free.shift();
    if (free === undefined) {
      const created: Backlog<T> = { sequence, queue: [item], ended: false, expiresUs };
      this.#backlog.push(created);
      this.#backlogBySequence.set(sequence, created);
      if (end) this.#endBacklog(created);
      return { kind: "backlog" };
    }
    free.sequence = sequence;
    free.ending = false;
    free.queue.push(item);
    this.#bySequence.set(sequence, free);
    if (end) this.#endSequence(free);
    return { kind: "slot", slot: free };
  }

  /**
   * Called when a slot's queue ran dry or its last request finished: an ending slot is freed and handed to the
   * oldest backlogged sequence (returned, so its requests can be scheduled), or becomes free.
   */
  settle(slot: SequenceSlot<T>): SequenceSlot<T> | undefined {
    if (!slot.ending || slot.queue.length > 0 || slot.inFlight) return undefined;
    slot.sequence = undefined;
    slot.ending = false;
    const next = this.#backlog.shift();
    if (next === undefined) {
      this.#free.push(slot);
      this.#sortFree();
      return undefined;
    }
    this.#backlogBySequence.delete(next.sequence);
    slot.sequence = next.sequence;
    slot.queue.push(...next.queue);
    if (next.ended) slot.ending = true;
    else this.#bySequence.set(next.sequence, slot);
    return slot;
  }

  /**
   * Triton's reaper: a sequence in a slot whose last request came `max_sequence_idle_microseconds` ago or more is
   * ended (its later requests need START again); returns the slots to settle. A backlogged sequence is not ended
   * while it waits. Also returns when the next sequence would become idle (Infinity: none).
   */
  reap(nowUs: number): { ended: SequenceSlot<T>[]; nextUs: number } {
    const ended: SequenceSlot<T>[] = [];
    let nextUs = Infinity;
    for (const [sequence, lastUs] of this.#lastSeenUs) {
      const slot = this.#bySequence.get(sequence);
      if (slot === undefined) {
        if (!this.#backlogBySequence.has(sequence)) this.#lastSeenUs.delete(sequence);
        continue;
      }
      if (nowUs - lastUs >= this.#idleUs) {
        this.#endSequence(slot);
        ended.push(slot);
      } else {
        nextUs = Math.min(nextUs, lastUs + this.#idleUs);
      }
    }
    return { ended, nextUs };
  }

  /**
   * Triton's reaper for backlogs: a backlogged sequence whose timeout has passed leaves the backlog with all its
   * requests (returned, to fail); its later requests need START again. Also returns when the next one expires.
   */
  expire(nowUs: number): { expired: T[]; nextUs: number } {
    const expired: T[] = [];
    let nextUs = Infinity;
    for (let i = 0; i < this.#backlog.length;) {
      const backlog = this.#backlog[i]!;
      if (backlog.expiresUs > nowUs) {
        nextUs = Math.min(nextUs, backlog.expiresUs);
        i++;
        continue;
      }
      this.#backlog.splice(i, 1);
      if (this.#backlogBySequence.get(backlog.sequence) === backlog) {
        this.#backlogBySequence.delete(backlog.sequence);
        this.#lastSeenUs.delete(backlog.sequence);
      }
      expired.push(...backlog.queue);
    }
    return { expired, nextUs };
  }

  /**
   * Triton's cancellation of a queued request: its whole sequence ends, and every request of it still queued (in
   * its slot or its backlog) leaves; returned, the cancelled one included. Empty when `item` is in no queue.
   */
  cancel(item: T): T[] {
    for (const perInstance of this.slots) {
      for (const slot of perInstance) {
        if (!slot.queue.includes(item)) continue;
        this.#endSequence(slot);
        return slot.queue.splice(0);
      }
    }
    const at = this.#backlog.findIndex((backlog) => backlog.queue.includes(item));
    if (at < 0) return [];
    const [backlog] = this.#backlog.splice(at, 1);
    if (this.#backlogBySequence.get(backlog!.sequence) === backlog) this.#endBacklog(backlog!);
    return backlog!.queue;
  }

  /** Every request waiting in a slot queue or the backlog, removed. */
  drain(): T[] {
    const items: T[] = [];
    for (const perInstance of this.slots) for (const slot of perInstance) items.push(...slot.queue.splice(0));
    for (const backlog of this.#backlog.splice(0)) items.push(...backlog.queue);
    this.#backlogBySequence.clear();
    return items;
  }

  #endSequence(slot: SequenceSlot<T>): void {
    if (slot.sequence !== undefined && this.#bySequence.get(slot.sequence) === slot) {
      this.#bySequence.delete(slot.sequence);
      this.#lastSeenUs.delete(slot.sequence);
    }
    slot.ending = true;
  }

  #endBacklog(backlog: Backlog<T>): void {
    backlog.ended = true;
    this.#backlogBySequence.delete(backlog.sequence);
    this.#lastSeenUs.delete(backlog.sequence);
  }

  #sortFree(): void {
    this.#free.sort((a, b) => a.index - b.index || a.instance - b.instance);
  }
}

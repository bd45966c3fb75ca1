/**
 * The time the schedulers read and the timers they set, behind one seam: production runs on process.hrtime and
 * Node's timers, and a test hands in a clock that moves only when told, so the batching and queue-policy rules are
 * checked at exact times without waiting.
 */

/** Monotonic time in nanoseconds. */
export interface Clock {
  now(): bigint;
}

/** A timer set on a {@link SchedulerClock}, for {@link SchedulerClock.clearTimer}. */
export type TimerHandle = NodeJS.Timeout | number;

export interface SchedulerClock extends Clock {
  /** {@link Clock.now} in whole µs: the unit of the batcher's delays and the queue's deadlines. */
  nowUs(): number;
  /** Calls `callback` once, `ms` (fractions allowed) from now. */
  setTimer(callback: () => void, ms: number): TimerHandle;
  clearTimer(handle: TimerHandle): void;
}

export const monotonicClock: SchedulerClock = {
  now: () => process.hrtime.bigint(),
  nowUs: () => Number(process.hrtime.bigint() / 1000n),
  setTimer: (callback, ms) => setTimeout(callback, ms),
  clearTimer: (handle) => clearTimeout(handle),
};

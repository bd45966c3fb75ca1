import type { SchedulerClock, TimerHandle } from "./clock";

/**
 * The one timer a scheduler keeps: it wakes the scheduler at the earliest time it was asked for (a batch's queue
 * delay, a request's timeout, an idle sequence's end). Asking for a later time while an earlier one is set changes
 * nothing, so each scheduling pass can simply ask for its next deadline.
 */
export class WakeTimer {
  readonly #wake: () => void;
  readonly #clock: Pick<SchedulerClock, "nowUs" | "setTimer" | "clearTimer">;
  // Made once: arming the timer on every scheduling pass allocates no closure.
  readonly #fire = (): void => {
    this.#timer = undefined;
    this.#atUs = Infinity;
    this.#wake();
  };
  #timer: TimerHandle | undefined;
  #atUs = Infinity;

  constructor(wake: () => void, clock: Pick<SchedulerClock, "nowUs" | "setTimer" | "clearTimer">) {
    this.#wake = wake;
    this.#clock = clock;
  }

  /** Wakes at `atUs` (on the clock's `nowUs`) unless set to wake earlier already; `Infinity` sets nothing. */
  armAt(atUs: number): void {
    if (atUs === Infinity || (this.#timer !== undefined && this.#atUs <= atUs)) return;
    this.clear();
    this.#atUs = atUs;
    this.#timer = this.#clock.setTimer(this.#fire, Math.max(0, (atUs - this.#clock.nowUs()) / 1000));
  }

  clear(): void {
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
    this.#atUs = Infinity;
  }
}

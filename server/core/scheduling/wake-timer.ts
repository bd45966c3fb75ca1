/**
 * The one timer a scheduler keeps: it wakes the scheduler at the earliest time it was asked for (a batch's queue
 * delay, a request's timeout, an idle sequence's end). Asking for a later time while an earlier one is set changes
 * nothing, so each scheduling pass can simply ask for its next deadline.
 */
export class WakeTimer {
  readonly #wake: () => void;
  readonly #nowUs: () => number;
  #timer: NodeJS.Timeout | undefined;
  #atUs = Infinity;

  constructor(wake: () => void, nowUs: () => number) {
    this.#wake = wake;
    this.#nowUs = nowUs;
  }

  /** Wakes at `atUs` (on the `nowUs` clock) unless set to wake earlier already; `Infinity` sets nothing. */
  armAt(atUs: number): void {
    if (atUs === Infinity || (this.#timer !== undefined && this.#atUs <= atUs)) return;
    this.clear();
    this.#atUs = atUs;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#atUs = Infinity;
      this.#wake();
    }, Math.max(0, (atUs - this.#nowUs()) / 1000));
  }

  clear(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#atUs = Infinity;
  }
}

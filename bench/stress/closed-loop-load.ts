import { setTimeout as sleep } from "node:timers/promises";
import type { Outcome } from "./stress-clients";

/** One request of a load run: which worker sent it, when (ms on performance.now()), and how it ended. */
export interface LoadRecord {
  readonly worker: number;
  readonly startMs: number;
  readonly outcome: Outcome;
}

/**
 * Closed-loop load: each sender is a worker that sends its next request as soon as the last one is answered,
 * until {@link stop} or until `finished` says that worker is done (e.g. the server refused it during a drain).
 */
export class ClosedLoopLoad {
  readonly records: LoadRecord[] = [];
  readonly #workers: Promise<void>[];
  #stopping = false;

  /** Workers start spread over `rampMs`, so the first requests do not all land at once. */
  constructor(senders: readonly (() => Promise<Outcome>)[], options: { rampMs?: number; finished?: (record: LoadRecord) => boolean } = {}) {
    const finished = options.finished ?? (() => false);
    this.#workers = senders.map(async (send, worker) => {
      if (options.rampMs) await sleep((worker * options.rampMs) / senders.length);
      while (!this.#stopping) {
        const startMs = performance.now();
        const record = { worker, startMs, outcome: await send() };
        this.records.push(record);
        if (finished(record)) return;
      }
    });
  }

  /** Resolves once every worker has stopped on its own. */
  async done(): Promise<void> {
    await Promise.all(this.#workers);
  }

  /** Lets each worker finish the request it has out, then resolves. */
  async stop(): Promise<void> {
    this.#stopping = true;
    await this.done();
  }
}

/** Samples a number (a process's RSS) every `intervalMs` until stopped. */
export class Sampler {
  readonly samples: { atMs: number; value: number }[] = [];
  readonly #timer: NodeJS.Timeout;

  constructor(read: () => number | undefined, intervalMs: number) {
    const take = (): void => {
      const value = read();
      if (value !== undefined) this.samples.push({ atMs: performance.now(), value });
    };
    take();
    this.#timer = setInterval(take, intervalMs);
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  peak(): number {
    return Math.max(...this.samples.map((s) => s.value));
  }
}

import { SeededRandom } from "../model-builder/index";

/** Client time of one request that succeeded: encoding (send) and reading/decoding the response (receive). */
export interface RequestTiming {
  readonly sendNs: number;
  readonly receiveNs: number;
}

/** Sends one request; resolves when its response was read, rejects when it failed. */
export type RequestSender = () => Promise<RequestTiming>;

/**
 * Closed loop (`concurrency` requests always outstanding) or open loop (requests started on a schedule of
 * `requestsPerSecond`, evenly spaced or with Poisson arrivals, whether or not earlier ones finished).
 */
export type LoadSchedule =
  | { readonly kind: "concurrency"; readonly concurrency: number }
  | { readonly kind: "request-rate"; readonly requestsPerSecond: number; readonly distribution: "constant" | "poisson"; readonly seed?: number };

/** Requests that completed inside one measurement window (perf_analyzer counts a request where it ends). */
export interface WindowRecords {
  readonly startNs: number;
  readonly endNs: number;
  readonly latenciesNs: number[];
  readonly sendNsTotal: number;
  readonly receiveNsTotal: number;
  /** Open loop: requests that left more than 1 ms after their scheduled time (the client fell behind). */
  readonly delayedCount: number;
  /** Requests started during the window. */
  readonly sentCount: number;
}

export interface LoadGeneratorOptions {
  /** Open loop: most requests in flight at once; later ones wait and count as delayed (default 1024). */
  readonly maxOutstanding?: number;
}

const nowNs = (): number => Number(process.hrtime.bigint());
const DELAY_TOLERANCE_NS = 1_000_000;

/**
 * Drives a {@link RequestSender} with a {@link LoadSchedule} from `start()` until `stop()`, and hands out what
 * completed window by window. Runs on the caller's event loop; the first failed request stops the load and
 * rejects the current (or next) `measureWindow`.
 */
export class LoadGenerator {
  readonly #send: RequestSender;
  readonly #schedule: LoadSchedule;
  readonly #maxOutstanding: number;
  #running = false;
  #failure: Error | undefined;
  #onFailure: ((error: Error) => void) | undefined;
  readonly #inFlight = new Set<Promise<void>>();
  #loops: Promise<void>[] = [];
  #slotFreed: (() => void) | undefined;
  #windowStartNs = 0;
  #latencies: number[] = [];
  #sendNsTotal = 0;
  #receiveNsTotal = 0;
  #delayed = 0;
  #sent = 0;

  constructor(send: RequestSender, schedule: LoadSchedule, options: LoadGeneratorOptions = {}) {
    this.#send = send;
    this.#schedule = schedule;
    this.#maxOutstanding = options.maxOutstanding ?? 1024;
  }

  /** Starts sending; the first window begins now. */
  start(): void {
    if (this.#running) throw new Error("the load generator is already running");
    this.#running = true;
    this.#windowStartNs = nowNs();
    const schedule = this.#schedule;
    this.#loops = schedule.kind === "concurrency"
      ? Array.from({ length: schedule.concurrency }, () => this.#closedLoop())
      : [this.#openLoop(schedule.requestsPerSecond, schedule.distribution, schedule.seed ?? 1)];
  }

  /** Lets the load run for `durationMs`, then returns what completed since the previous window ended. */
  measureWindow(durationMs: number): Promise<WindowRecords> {
    return new Promise((resolve, reject) => {
      if (this.#failure !== undefined) {
        reject(this.#failure);
        return;
      }
      const timer = setTimeout(() => {
        this.#onFailure = undefined;
        resolve(this.#takeRecords());
      }, durationMs);
      this.#onFailure = (error) => {
        clearTimeout(timer);
        reject(error);
      };
    });
  }

  /** Stops starting requests and waits for those in flight to settle. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#slotFreed?.();
    await Promise.all(this.#loops);
    await Promise.allSettled([...this.#inFlight]);
  }

  #takeRecords(): WindowRecords {
    const endNs = nowNs();
    const records: WindowRecords = {
      startNs: this.#windowStartNs, endNs, latenciesNs: this.#latencies, sendNsTotal: this.#sendNsTotal,
      receiveNsTotal: this.#receiveNsTotal, delayedCount: this.#delayed, sentCount: this.#sent,
    };
    this.#windowStartNs = endNs;
    this.#latencies = [];
    this.#sendNsTotal = 0;
    this.#receiveNsTotal = 0;
    this.#delayed = 0;
    this.#sent = 0;
    return records;
  }

  #fail(error: unknown): void {
    this.#running = false;
    if (this.#failure !== undefined) return;
    this.#failure = error instanceof Error ? error : new Error(String(error));
    this.#onFailure?.(this.#failure);
  }

  async #sendOne(): Promise<void> {
    this.#sent++;
    const startNs = nowNs();
    try {
      const timing = await this.#send();
      this.#latencies.push(nowNs() - startNs);
      this.#sendNsTotal += timing.sendNs;
      this.#receiveNsTotal += timing.receiveNs;
    } catch (error) {
      this.#fail(error);
    }
  }

  async #closedLoop(): Promise<void> {
    while (this.#running) await this.#sendOne();
  }

  async #openLoop(requestsPerSecond: number, distribution: "constant" | "poisson", seed: number): Promise<void> {
    const random = new SeededRandom(seed);
    const meanGapNs = 1e9 / requestsPerSecond;
    const gapNs = (): number => (distribution === "constant" ? meanGapNs : -Math.log(1 - random.nextFloat()) * meanGapNs);
    let dueNs = nowNs();
    while (this.#running) {
      const waitNs = dueNs - nowNs();
      if (waitNs > DELAY_TOLERANCE_NS) {
        await new Promise((resolve) => setTimeout(resolve, Math.floor(waitNs / 1e6)));
        continue;
      }
      if (this.#inFlight.size >= this.#maxOutstanding) {
        await new Promise<void>((resolve) => (this.#slotFreed = resolve));
        continue;
      }
      if (nowNs() - dueNs > DELAY_TOLERANCE_NS) this.#delayed++;
      const request = this.#sendOne().finally(() => {
        this.#inFlight.delete(request);
        this.#slotFreed?.();
      });
      this.#inFlight.add(request);
      dueNs += gapNs();
    }
  }
}

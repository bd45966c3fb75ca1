import { monotonicClock, type SchedulerClock } from "./clock";
import { DrainLatch } from "./drain-latch";
import { WakeTimer } from "./wake-timer";
import type { BackendInstance, ModelCaller } from "../../backends/backend";
import { executeEachItem, executeItems, executionTimings, traceCompute } from "./batch-execution";
import { type BatchSignature, batchSignature } from "./batch-tensors";
import { type BatchPolicy, decide, type PendingView } from "./batcher";
import { asInferenceError, InferenceError } from "../errors";
import type { CallLink, CancellationSignal, InferenceTrace, OutputTensor, ParameterValue } from "../request/inference-request";
import type { CallOrigin } from "./model-calls";
import type { InstancePool } from "./instance-pool";
import type { ModelSignature } from "../model-config/model-signature";
import type { ExecutionTimings } from "../repository/model-statistics";
import type { ValidatedRequest } from "../request/request-validation";
import { PriorityQueue, type Queued, type QueuePolicy } from "./priority-queue";
import type { RequestScheduler, ResponseSink, ScheduledResult, ScheduleOptions } from "./request-scheduler";

export type { QueuePolicy };

export interface SchedulerSettings {
  readonly batch: BatchPolicy;
  /** Queue policy per priority level; index 0 is level 1, the highest. */
  readonly levels: readonly QueuePolicy[];
  /** Level used for priority 0 (1-based). */
  readonly defaultLevel: number;
  readonly preserveOrdering: boolean;
  /**
   * Without a dynamic batcher: how many queued requests one idle instance may take at once, each still its own
   * execution, where its backend offers {@link BackendInstance.executeEach} (one thread hop for all). 1: one at a time.
   */
  readonly groupLimit: number;
}

/** Reports of the scheduler's own work, for statistics and metrics. */
export interface SchedulerListener {
  executed(timings: ExecutionTimings): void;
  /** The caller a request hands its model, for models that call others (backends taking requests one by one). */
  callerFor?(origin: CallOrigin): ModelCaller;
}

/** A request waiting in the queue, and how to answer it. */
/** Shared by requests without parameters (nothing writes to it). */
const NO_PARAMETERS: Readonly<Record<string, ParameterValue>> = Object.freeze({});

interface QueueEntry extends PendingView {
  readonly request: ValidatedRequest;
  readonly enqueueNs: bigint;
  readonly signal: CancellationSignal | undefined;
  readonly parameters: Readonly<Record<string, ParameterValue>>;
  readonly trace: InferenceTrace | undefined;
  readonly sink: ResponseSink | undefined;
  readonly chain: readonly CallLink[] | undefined;
  readonly onAbort: () => void;
  readonly resolve: (result: ScheduledResult) => void;
  readonly reject: (error: InferenceError) => void;
}

/**
 * A model version's dynamic batcher (Triton's DynamicBatchScheduler, or its default scheduler when
 * `batch.maxBatchSize` is 1): owns the timers and hands batches to idle instances. The order requests wait in is
 * the {@link PriorityQueue}'s; the batching decision itself is {@link decide}. Aborted requests leave the queue and
 * are never executed.
 */
export class Scheduler implements RequestScheduler {
  readonly #signature: BatchSignature;
  readonly #settings: SchedulerSettings;
  readonly #pool: InstancePool;
  readonly #listener: SchedulerListener;
  readonly #queue: PriorityQueue<QueueEntry>;
  readonly #outputNames: readonly string[];
  readonly #clock: SchedulerClock;
  readonly #wake: WakeTimer;
  readonly #drain = new DrainLatch();
  // preserve_ordering: batches deliver their responses in dispatch order.
  #nextDispatchSeq = 0;
  #nextDeliverSeq = 0;
  readonly #finished = new Map<number, () => void>();

  /** `clock`: where the queue delays and timeouts are measured and their timer set (a fake one in tests). */
  constructor(
    signature: ModelSignature, settings: SchedulerSettings, pool: InstancePool, listener: SchedulerListener, clock: SchedulerClock = monotonicClock,
  ) {
    this.#signature = batchSignature(signature);
    this.#settings = settings;
    this.#pool = pool;
    this.#listener = listener;
    this.#clock = clock;
    this.#wake = new WakeTimer(() => this.#schedule(), clock);
    this.#queue = new PriorityQueue(settings.levels, settings.defaultLevel, clock);
    this.#outputNames = signature.outputs.map((o) => o.name);
    pool.listen({
      available: () => this.#schedule(),
      allDown: (why) => this.#failQueued(new InferenceError("UNAVAILABLE", why)),
    });
  }

  /** Requests accepted and not yet executing. */
  get pendingCount(): number {
    return this.#queue.length;
  }

  get queueDepth(): number {
    return this.#queue.undelayedLength;
  }

  enqueue(request: ValidatedRequest, options: ScheduleOptions): Promise<ScheduledResult> {
    if (this.#drain.closed) return Promise.reject(new InferenceError("UNAVAILABLE", "model is unloading"));
    const admission = this.#queue.admit(options.priority, options.timeoutUs);
    if (admission instanceof InferenceError) return Promise.reject(admission);
    if (options.signal?.aborted) return Promise.reject(new InferenceError("CANCELLED", "request was cancelled by the client"));
    options.trace?.timestamp("QUEUE_START", admission.enqueueNs);

    return new Promise<ScheduledResult>((resolve, reject) => {
      // The abort handler needs the entry's place in the queue, which exists once the entry is pushed (below).
      const entry: QueueEntry = {
        request, batchSize: request.batchSize, shapeKey: request.shapeKey, enqueueUs: admission.enqueueUs, enqueueNs: admission.enqueueNs,
        signal: options.signal, parameters: options.parameters ?? NO_PARAMETERS, trace: options.trace, sink: options.sink, chain: options.chain,
        onAbort: () => this.#cancel(queued), resolve, reject,
      };
      const queued = this.#queue.push(entry, admission);
      entry.signal?.addEventListener("abort", entry.onAbort, { once: true });
      this.#schedule();
    });
  }

  /**
   * Refuses new requests and resolves once every accepted one is answered: what is queued still runs, under the
   * same batching and queue policy (Triton's unload lets in-flight requests complete).
   */
  close(): Promise<void> {
    const drained = this.#drain.drained();
    this.#resolveIfDrained();
    return drained;
  }

  /**
   * Fails every request still waiting with UNAVAILABLE and refuses new ones, for a deadline that has passed
   * (the server's exit timeout); executions already running finish and answer their requests.
   */
  refuseQueued(message: string): void {
    this.#drain.close();
    this.#failQueued(new InferenceError("UNAVAILABLE", message));
  }

  #resolveIfDrained(): void {
    if (this.#drain.settleIfIdle(this.#pool.busyCount === 0 && this.pendingCount === 0)) this.#wake.clear();
  }

  #cancel(queued: Queued<QueueEntry>): void {
    if (this.#queue.remove(queued)) this.#fail([queued.value], new InferenceError("CANCELLED", "request was cancelled by the client"));
  }

  #failQueued(error: InferenceError): void {
    this.#fail(this.#queue.drain(), error);
  }

  /** Fails requests that have left the queue. */
  #fail(entries: readonly QueueEntry[], error: InferenceError): void {
    for (const entry of entries) {
      entry.signal?.removeEventListener("abort", entry.onAbort);
      entry.reject(error);
    }
    this.#resolveIfDrained();
  }

  #schedule(): void {
    const now = this.#clock.nowUs();
    const expired = this.#queue.expire(now);
    if (expired.length > 0) this.#fail(expired, new InferenceError("UNAVAILABLE", "Request timeout expired"));
    while (this.#pool.hasIdle) {
      const decision = decide(this.#queue.head(this.#settings.batch.maxBatchSize + 1), now, this.#settings.batch);
      if (decision.kind === "idle") break;
      if (decision.kind === "wait") {
        this.#wake.armAt(now + decision.us);
        return;
      }
      const share = Math.min(this.#settings.groupLimit, Math.ceil(this.#queue.length / this.#pool.idleCount));
      const instance = this.#pool.acquire()!;
      const grouped = decision.count === 1 && share > 1 && instance.executeEach !== undefined;
      const entries = this.#queue.take(grouped ? share : decision.count);
      for (const entry of entries) entry.signal?.removeEventListener("abort", entry.onAbort);
      this.#dispatch(instance, entries, grouped && entries.length > 1);
    }
    this.#wake.armAt(this.#queue.nextDeadlineUs());
  }

  #dispatch(instance: BackendInstance, entries: QueueEntry[], grouped: boolean): void {
    const seq = this.#nextDispatchSeq++;
    void (grouped ? this.#executeEach(instance, entries) : this.#execute(instance, entries)).then((deliver) => {
      this.#pool.release(instance);
      if (this.#settings.preserveOrdering) {
        this.#finished.set(seq, deliver);
        for (let next = this.#finished.get(this.#nextDeliverSeq); next !== undefined; next = this.#finished.get(this.#nextDeliverSeq)) {
          this.#finished.delete(this.#nextDeliverSeq++);
          next();
        }
      } else {
        deliver();
      }
      this.#schedule();
      this.#resolveIfDrained();
    });
  }

  /** Runs one batch; resolves (never rejects) with the function that hands each request its result. */
  async #execute(instance: BackendInstance, entries: readonly QueueEntry[]): Promise<() => void> {
    const startNs = process.hrtime.bigint();
    try {
      const outcome = await executeItems(instance, entries, this.#signature, this.#outputNames, this.#listener.callerFor);
      this.#listener.executed(executionTimings(startNs, outcome, entries.reduce((sum, entry) => sum + entry.request.batchSize, 0), entries.length));
      for (const entry of entries) if (entry.trace !== undefined) traceCompute(entry.trace, startNs, outcome);
      return () => entries.forEach((entry, i) => settle(entry, outcome.results[i]!, startNs));
    } catch (error) {
      const failure = asInferenceError(error);
      return () => entries.forEach((entry) => entry.reject(failure));
    }
  }

  /**
   * Runs each request as its own execution, handed to the instance at once: each is counted, timed and traced as
   * one execution of batch size 1, and fails on its own. The instance failing as a whole fails them all.
   */
  async #executeEach(instance: BackendInstance, entries: readonly QueueEntry[]): Promise<() => void> {
    try {
      const executions = await executeEachItem(instance, entries, this.#signature, this.#listener.callerFor);
      executions.forEach(({ startNs, outcome }, i) => {
        if (outcome instanceof InferenceError) return;
        const entry = entries[i]!;
        this.#listener.executed(executionTimings(startNs, outcome, entry.request.batchSize, 1));
        if (entry.trace !== undefined) traceCompute(entry.trace, startNs, outcome);
      });
      return () => executions.forEach(({ startNs, outcome }, i) => {
        settle(entries[i]!, outcome instanceof InferenceError ? outcome : outcome.results[0]!, startNs);
      });
    } catch (error) {
      const failure = asInferenceError(error);
      return () => entries.forEach((entry) => entry.reject(failure));
    }
  }
}

/** Answers a request that ran in an execution that began at `startNs`. */
function settle(entry: QueueEntry, result: OutputTensor[] | InferenceError, startNs: bigint): void {
  if (result instanceof InferenceError) entry.reject(result);
  else entry.resolve({ outputs: result, queueNs: Number(startNs - entry.enqueueNs) });
}

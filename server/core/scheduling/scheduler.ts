import { monotonicClock, type SchedulerClock } from "./clock";
import { DrainLatch } from "./drain-latch";
import { WakeTimer } from "./wake-timer";
import type { BackendInstance, ModelCaller } from "../../backends/backend";
import { executeEachItem, executeItems, type ExecutionItem, executionTimings } from "./batch-execution";
import { type BatchSignature, batchSignature } from "./batch-tensors";
import { type BatchPolicy, decide, type PendingView } from "./batcher";
import { asInferenceError, InferenceError } from "../errors";
import type { CallLink, CancellationSignal, InferenceTrace, OutputTensor, ParameterValue } from "../request/inference-request";
import type { RequestTimes } from "../request/request-times";
import type { CallOrigin } from "./model-calls";
import type { InstancePool } from "./instance-pool";
import type { ModelSignature } from "../model-config/model-signature";
import type { ExecutionTimings } from "../repository/model-statistics";
import type { ValidatedRequest } from "../request/request-validation";
import { PriorityQueue, type Queued, type QueuePolicy } from "./priority-queue";
import type { RequestScheduler, ResponseSink, ScheduleOptions } from "./request-scheduler";

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
  /** The model is decoupled: its responses reach each request's sink from the backend, during or after the execution. */
  readonly decoupled: boolean;
}

/** Reports of the scheduler's own work, for statistics and metrics. */
export interface SchedulerListener {
  executed(timings: ExecutionTimings): void;
  /** The caller a request hands its model, for models that call others (backends taking requests one by one). */
  callerFor?(origin: CallOrigin): ModelCaller;
}

/** Shared by requests without parameters (nothing writes to it). */
const NO_PARAMETERS: Readonly<Record<string, ParameterValue>> = Object.freeze({});

/** A request waiting in the queue, and where its answer goes. */
interface QueueEntry extends PendingView {
  readonly request: ValidatedRequest;
  readonly signal: CancellationSignal | undefined;
  readonly parameters: Readonly<Record<string, ParameterValue>>;
  readonly trace: InferenceTrace | undefined;
  readonly sink: ResponseSink;
  readonly times: RequestTimes;
  readonly chain: readonly CallLink[] | undefined;
  readonly onAbort: () => void;
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

  enqueue(request: ValidatedRequest, options: ScheduleOptions): void {
    const { sink } = options;
    if (this.#drain.closed) return sink.send(new InferenceError("UNAVAILABLE", "model is unloading"), true);
    const admission = this.#queue.admit(options.priority, options.timeoutUs);
    if (admission instanceof InferenceError) return sink.send(admission, true);
    if (options.signal?.aborted) return sink.send(new InferenceError("CANCELLED", "request was cancelled by the client"), true);
    options.times.queueStartNs = admission.enqueueNs;
    // Triton traces the inputs where its dynamic batcher stamps QUEUE_START (dynamic_batch_scheduler.cc, Enqueue).
    options.trace?.tensors("TENSOR_QUEUE_INPUT", request.inputs.values());
    // The abort handler needs the entry's place in the queue, which exists once the entry is pushed (below).
    const entry: QueueEntry = {
      request, batchSize: request.batchSize, shapeKey: request.shapeKey, enqueueUs: admission.enqueueUs,
      signal: options.signal, parameters: options.parameters ?? NO_PARAMETERS, trace: options.trace,
      sink, times: options.times, chain: options.chain,
      onAbort: () => this.#cancel(queued),
    };
    const queued = this.#queue.push(entry, admission);
    entry.signal?.addEventListener("abort", entry.onAbort, { once: true });
    this.#schedule();
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
      entry.sink.send(error, true);
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
    // On the clock the queue stamped its entries with, so their queue time is exact under a test's clock too.
    const startNs = this.#clock.now();
    for (const entry of entries) entry.times.computeStartNs = startNs;
    try {
      const outcome = await executeItems(instance, entries.map((entry) => itemOf(entry, this.#settings.decoupled)), this.#signature, this.#outputNames, this.#listener.callerFor);
      this.#listener.executed(executionTimings(startNs, outcome, entries.reduce((sum, entry) => sum + entry.request.batchSize, 0), entries.length));
      for (const entry of entries) if (entry.trace !== undefined) entry.times.execution = outcome;
      return () => entries.forEach((entry, i) => settle(entry, outcome.results[i]));
    } catch (error) {
      const failure = asInferenceError(error);
      return () => entries.forEach((entry) => entry.sink.send(failure, true));
    }
  }

  /**
   * Runs each request as its own execution, handed to the instance at once: each is counted, timed and traced as
   * one execution of batch size 1, and fails on its own. The instance failing as a whole fails them all.
   */
  async #executeEach(instance: BackendInstance, entries: readonly QueueEntry[]): Promise<() => void> {
    // Until the backend tells when each began, each is taken to start when the group leaves for the instance.
    const handedNs = this.#clock.now();
    for (const entry of entries) entry.times.computeStartNs = handedNs;
    try {
      const executions = await executeEachItem(instance, entries.map((entry) => itemOf(entry, this.#settings.decoupled)), this.#signature, this.#listener.callerFor);
      executions.forEach(({ startNs, outcome }, i) => {
        if (outcome instanceof InferenceError) return;
        const entry = entries[i]!;
        this.#listener.executed(executionTimings(startNs, outcome, entry.request.batchSize, 1));
        // Queued behind the group's earlier executions on the instance: its queue time ends where its own began.
        entry.times.computeStartNs = startNs;
        if (entry.trace !== undefined) entry.times.execution = outcome;
      });
      return () => executions.forEach(({ outcome }, i) => settle(entries[i]!, outcome instanceof InferenceError ? outcome : outcome.results[0]));
    } catch (error) {
      const failure = asInferenceError(error);
      return () => entries.forEach((entry) => entry.sink.send(failure, true));
    }
  }
}

/** A queued request as an execution item: a decoupled model's backend answers the request's sink itself. */
function itemOf(entry: QueueEntry, decoupled: boolean): ExecutionItem {
  return { request: entry.request, parameters: entry.parameters, sink: decoupled ? entry.sink : undefined, signal: entry.signal, trace: entry.trace, chain: entry.chain };
}

/**
 * Answers a request whose execution ended: its outputs or error, final; nothing for a decoupled request, whose
 * responses went to its sink (and whose failure as a whole, should the backend report one, ends it here).
 */
function settle(entry: QueueEntry, result: OutputTensor[] | InferenceError | undefined): void {
  if (result !== undefined) entry.sink.send(result, true);
}

import { monotonicClock, type SchedulerClock } from "./clock";
import { DrainLatch } from "./drain-latch";
import { WakeTimer } from "./wake-timer";
import type { BackendInstance, ModelCaller } from "../../backends/backend";
import { type ExecutionContext, type ExecutionItem, executionTimings, type ItemResult, runExecutions } from "./batch-execution";
import { batchSignature } from "./batch-tensors";
import { type BatchPolicy, decide, type PendingView } from "./batcher";
import { InferenceError } from "../errors";
import type { CallLink, CancellationSignal, InferenceTrace, ParameterValue } from "../request/inference-request";
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
   * execution, where its backend takes several in one call ({@link BackendInstance.groupsExecutions}: one thread hop
   * for all). 1: one at a time.
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
  readonly #context: ExecutionContext;
  readonly #settings: SchedulerSettings;
  readonly #pool: InstancePool;
  readonly #listener: SchedulerListener;
  readonly #queue: PriorityQueue<QueueEntry>;
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
    this.#context = { signature: batchSignature(signature), decoupled: settings.decoupled, callerFor: listener.callerFor };
    this.#settings = settings;
    this.#pool = pool;
    this.#listener = listener;
    this.#clock = clock;
    this.#wake = new WakeTimer(() => this.#schedule(), clock);
    this.#queue = new PriorityQueue(settings.levels, settings.defaultLevel, clock);
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
      const grouped = decision.count === 1 && share > 1 && instance.groupsExecutions;
      const entries = this.#queue.take(grouped ? share : decision.count);
      for (const entry of entries) entry.signal?.removeEventListener("abort", entry.onAbort);
      this.#dispatch(instance, grouped ? entries.map((entry) => [entry]) : [entries]);
    }
    this.#wake.armAt(this.#queue.nextDeadlineUs());
  }

  /** `executions`: one batch, or (grouped) each request an execution of its own, all in one call to the instance. */
  #dispatch(instance: BackendInstance, executions: readonly (readonly QueueEntry[])[]): void {
    const seq = this.#nextDispatchSeq++;
    void this.#execute(instance, executions).then((deliver) => {
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

  /**
   * Runs the executions; resolves (never rejects) with the function that hands each request its answer. Each
   * execution is counted, timed and traced on its own, and fails on its own; the instance failing fails them all.
   */
  async #execute(instance: BackendInstance, executions: readonly (readonly QueueEntry[])[]): Promise<() => void> {
    // On the clock the queue stamped its entries with, so their queue time is exact under a test's clock too. Until
    // the backend tells when each execution began, each is taken to start when the call leaves for the instance.
    const startNs = this.#clock.now();
    for (const entries of executions) for (const entry of entries) entry.times.computeStartNs = startNs;
    const run = await runExecutions(instance, executions.map((entries) => entries.map(itemOf)), this.#context, startNs);
    run.outcomes.forEach((outcome, e) => {
      if (outcome === undefined) return;
      const entries = executions[e]!;
      this.#listener.executed(executionTimings(outcome, entries.reduce((sum, entry) => sum + entry.request.batchSize, 0), entries.length));
      for (const entry of entries) {
        // Queued behind the call's earlier executions on the instance: its queue time ends where its own began.
        entry.times.computeStartNs = outcome.startNs;
        if (entry.trace !== undefined) entry.times.execution = outcome;
      }
    });
    return () => executions.forEach((entries, e) => entries.forEach((entry, i) => settle(entry, run.results[e]![i])));
  }
}

function itemOf(entry: QueueEntry): ExecutionItem {
  return { request: entry.request, parameters: entry.parameters, sink: entry.sink, signal: entry.signal, trace: entry.trace, chain: entry.chain };
}

/**
 * Answers a request whose execution ended: its outputs or error, final; nothing for a decoupled request, whose
 * responses went to its sink (and whose failure as a whole, should the backend report one, ends it here).
 */
function settle(entry: QueueEntry, result: ItemResult): void {
  if (result !== undefined) entry.sink.send(result, true);
}

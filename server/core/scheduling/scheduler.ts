import type { BackendInstance, ExecutionResult } from "../../backends/backend";
import { assembleBatch, type BatchSignature, batchSignature, requestOutputs, splitBatch } from "./batch-tensors";
import { type BatchPolicy, decide, type PendingView } from "./batcher";
import { asInferenceError, InferenceError } from "../errors";
import type { CancellationSignal, InferenceTrace, OutputTensor, ParameterValue } from "../request/inference-request";
import type { InstancePool } from "./instance-pool";
import type { ModelSignature } from "../model-config/model-signature";
import type { ExecutionTimings } from "../repository/model-statistics";
import type { ValidatedRequest } from "../request/request-validation";
import type { RequestScheduler } from "../repository/model-version";
import { RingBuffer } from "./ring-buffer";

/** Triton's ModelQueuePolicy, in the scheduler's units. */
export interface QueuePolicy {
  readonly timeoutAction: "REJECT" | "DELAY";
  /** 0 = no timeout. */
  readonly defaultTimeoutUs: number;
  readonly allowTimeoutOverride: boolean;
  /** 0 = unbounded. */
  readonly maxQueueSize: number;
}

export interface SchedulerSettings {
  readonly batch: BatchPolicy;
  /** Queue policy per priority level; index 0 is level 1, the highest. */
  readonly levels: readonly QueuePolicy[];
  /** Level used for priority 0 (1-based). */
  readonly defaultLevel: number;
  readonly preserveOrdering: boolean;
}

export interface ScheduleOptions {
  /** Triton's `priority` request parameter: 0 = default, 1 = highest. */
  readonly priority?: number;
  /** Triton's `timeout` request parameter, µs. */
  readonly timeoutUs?: number;
  readonly signal?: CancellationSignal;
  /** The request's parameters, for a scheduler that forwards the request (an ensemble's steps). */
  readonly parameters?: Readonly<Record<string, ParameterValue>>;
  /** A sampled request's trace: the scheduler records QUEUE_START and the COMPUTE_* timestamps. */
  readonly trace?: InferenceTrace;
}

export interface ScheduledResult {
  readonly outputs: OutputTensor[];
  readonly queueNs: number;
}

/** Reports of the scheduler's own work, for statistics and metrics. */
export interface SchedulerListener {
  executed(timings: ExecutionTimings): void;
}

interface QueueEntry extends PendingView {
  readonly request: ValidatedRequest;
  readonly enqueueNs: bigint;
  readonly deadlineUs: number;
  readonly timeoutAction: QueuePolicy["timeoutAction"];
  readonly level: number;
  readonly signal: CancellationSignal | undefined;
  readonly parameters: Readonly<Record<string, ParameterValue>>;
  readonly trace: InferenceTrace | undefined;
  readonly onAbort: () => void;
  readonly resolve: (result: ScheduledResult) => void;
  readonly reject: (error: InferenceError) => void;
  done: boolean;
  /** Timed out under a DELAY policy: now waits in the delayed queue. */
  delayed: boolean;
}

/** One execution as the scheduler's report needs it, and the function that hands each request its result. */
interface Execution {
  readonly assembledNs: bigint;
  /** When the outputs were ready to hand out. */
  readonly endNs: bigint;
  readonly backend: Pick<ExecutionResult, "computeInputNs" | "computeInferNs">;
  readonly deliver: () => void;
}

const nowUs = (): number => Number(process.hrtime.bigint() / 1000n);

/**
 * Triton's COMPUTE_* timestamps of one execution. The backend measures its input and infer phases as durations
 * on its own thread; placed after the batch was assembled, and never past the end the scheduler saw.
 */
function traceCompute(trace: InferenceTrace, startNs: bigint, assembledNs: bigint, endNs: bigint, backend: Execution["backend"]): void {
  const inputEndNs = assembledNs + BigInt(Math.round(backend.computeInputNs));
  const clamp = (ns: bigint): bigint => (ns < endNs ? ns : endNs);
  trace.timestamp("COMPUTE_START", startNs);
  trace.timestamp("COMPUTE_INPUT_END", clamp(inputEndNs));
  trace.timestamp("COMPUTE_OUTPUT_START", clamp(inputEndNs + BigInt(Math.round(backend.computeInferNs))));
  trace.timestamp("COMPUTE_END", endNs);
}

/**
 * A model version's request queue and dynamic batcher (Triton's DynamicBatchScheduler, or its default scheduler
 * when `batch.maxBatchSize` is 1). Owns the timers and queues; the batching decision itself is {@link decide}.
 * Requests queue per priority level; a request that times out under a DELAY policy moves to a queue served only
 * when nothing else waits. Aborted requests leave the queue and are never executed.
 */
export class Scheduler implements RequestScheduler {
  readonly #signature: BatchSignature;
  readonly #settings: SchedulerSettings;
  readonly #pool: InstancePool;
  readonly #listener: SchedulerListener;
  readonly #queues: RingBuffer<QueueEntry>[];
  readonly #delayed = new RingBuffer<QueueEntry>();
  /** Priority levels from the highest, then the delayed queue: the order requests are served in. */
  readonly #serviceOrder: readonly RingBuffer<QueueEntry>[];
  readonly #outputNames: readonly string[];
  readonly #liveByLevel: number[];
  #delayedCount = 0;
  #withDeadline = 0;
  #timer: NodeJS.Timeout | undefined;
  #timerAtUs = Infinity;
  #closed = false;
  #drained: (() => void) | undefined;
  // preserve_ordering: batches deliver their responses in dispatch order.
  #nextDispatchSeq = 0;
  #nextDeliverSeq = 0;
  readonly #finished = new Map<number, () => void>();

  constructor(signature: ModelSignature, settings: SchedulerSettings, pool: InstancePool, listener: SchedulerListener) {
    this.#signature = batchSignature(signature);
    this.#settings = settings;
    this.#pool = pool;
    this.#listener = listener;
    this.#queues = settings.levels.map(() => new RingBuffer<QueueEntry>());
    this.#serviceOrder = [...this.#queues, this.#delayed];
    this.#outputNames = signature.outputs.map((o) => o.name);
    this.#liveByLevel = settings.levels.map(() => 0);
    pool.listen({
      available: () => this.#schedule(),
      allDown: (why) => this.#failQueued(new InferenceError("UNAVAILABLE", why)),
    });
  }

  /** Requests accepted and not yet executing. */
  get pendingCount(): number {
    return this.#liveByLevel.reduce((a, b) => a + b, 0) + this.#delayedCount;
  }

  get queueDepth(): number {
    return this.#liveByLevel.reduce((a, b) => a + b, 0);
  }

  enqueue(request: ValidatedRequest, options: ScheduleOptions): Promise<ScheduledResult> {
    if (this.#closed) return Promise.reject(new InferenceError("UNAVAILABLE", "model is unloading"));
    const levels = this.#settings.levels;
    const priority = options.priority ?? 0;
    if (!Number.isInteger(priority) || priority < 0 || priority > levels.length) {
      return Promise.reject(new InferenceError("INVALID_ARG", `priority ${priority} is out of range: the model has ${levels.length} priority level(s)`));
    }
    const level = priority === 0 ? this.#settings.defaultLevel : priority;
    const policy = levels[level - 1]!;
    if (policy.maxQueueSize > 0 && this.#liveByLevel[level - 1]! >= policy.maxQueueSize) {
      return Promise.reject(new InferenceError("UNAVAILABLE", "Exceeds maximum queue size"));
    }
    if (options.signal?.aborted) return Promise.reject(new InferenceError("CANCELLED", "request was cancelled by the client"));

    let timeoutUs = policy.defaultTimeoutUs;
    const requested = options.timeoutUs ?? 0;
    if (policy.allowTimeoutOverride && requested > 0 && (timeoutUs === 0 || requested < timeoutUs)) timeoutUs = requested;
    const enqueueNs = process.hrtime.bigint();
    const enqueueUs = Number(enqueueNs / 1000n);
    options.trace?.timestamp("QUEUE_START", enqueueNs);

    return new Promise<ScheduledResult>((resolve, reject) => {
      const entry: QueueEntry = {
        request, batchSize: request.batchSize, shapeKey: request.shapeKey, enqueueUs, enqueueNs,
        deadlineUs: timeoutUs > 0 ? enqueueUs + timeoutUs : Infinity, timeoutAction: policy.timeoutAction, level,
        signal: options.signal, parameters: options.parameters ?? {}, trace: options.trace, onAbort: () => this.#cancel(entry), resolve, reject,
        done: false, delayed: false,
      };
      entry.signal?.addEventListener("abort", entry.onAbort, { once: true });
      if (entry.deadlineUs !== Infinity) this.#withDeadline++;
      this.#queues[level - 1]!.push(entry);
      this.#liveByLevel[level - 1]!++;
      this.#schedule();
    });
  }

  /**
   * Refuses new requests and resolves once every accepted one is answered: what is queued still runs, under the
   * same batching and queue policy (Triton's unload lets in-flight requests complete).
   */
  close(): Promise<void> {
    this.#closed = true;
    const drained = new Promise<void>((resolve) => (this.#drained = resolve));
    this.#resolveIfDrained();
    return drained;
  }

  /**
   * Fails every request still waiting with UNAVAILABLE and refuses new ones, for a deadline that has passed
   * (the server's exit timeout); executions already running finish and answer their requests.
   */
  refuseQueued(message: string): void {
    this.#closed = true;
    this.#failQueued(new InferenceError("UNAVAILABLE", message));
  }

  #resolveIfDrained(): void {
    if (!this.#closed || this.#pool.busyCount > 0 || this.pendingCount > 0) return;
    this.#clearTimer();
    this.#drained?.();
    this.#drained = undefined;
  }

  #cancel(entry: QueueEntry): void {
    if (entry.done) return;
    this.#settle(entry, new InferenceError("CANCELLED", "request was cancelled by the client"));
  }

  /** Marks an entry finished and fails it; queues drop finished entries lazily. */
  #settle(entry: QueueEntry, error: InferenceError): void {
    if (entry.done) return;
    this.#forget(entry);
    entry.reject(error);
    this.#resolveIfDrained();
  }

  #failQueued(error: InferenceError): void {
    for (const queue of this.#serviceOrder) {
      while (queue.length > 0) this.#settle(queue.shift()!, error);
    }
  }

  #forget(entry: QueueEntry): void {
    entry.done = true;
    entry.signal?.removeEventListener("abort", entry.onAbort);
    if (entry.delayed) {
      this.#delayedCount--;
    } else {
      this.#liveByLevel[entry.level - 1]!--;
      if (entry.deadlineUs !== Infinity) this.#withDeadline--;
    }
  }

  #schedule(): void {
    const now = nowUs();
    if (this.#withDeadline > 0) this.#expire(now);
    while (this.#pool.hasIdle) {
      const view = this.#head(this.#settings.batch.maxBatchSize + 1);
      const decision = decide(view, now, this.#settings.batch);
      if (decision.kind === "idle") break;
      if (decision.kind === "wait") {
        this.#armTimer(now + decision.us);
        return;
      }
      this.#dispatch(this.#take(decision.count));
    }
    if (this.#withDeadline > 0) this.#armTimer(this.#earliestDeadline());
  }

  /** Handles queue timeouts: REJECT fails the request, DELAY moves it behind everything else. */
  #expire(now: number): void {
    for (const queue of this.#queues) {
      queue.retain((entry) => {
        if (entry.done) return false;
        if (entry.deadlineUs > now) return true;
        if (entry.timeoutAction === "REJECT") {
          this.#settle(entry, new InferenceError("UNAVAILABLE", "Request timeout expired"));
        } else {
          this.#withDeadline--;
          this.#liveByLevel[entry.level - 1]!--;
          this.#delayedCount++;
          entry.delayed = true;
          this.#delayed.push(entry);
        }
        return false;
      });
    }
  }

  #earliestDeadline(): number {
    let earliest = Infinity;
    for (const queue of this.#queues) {
      for (let i = 0; i < queue.length; i++) {
        const entry = queue.at(i)!;
        if (!entry.done && entry.deadlineUs < earliest) earliest = entry.deadlineUs;
      }
    }
    return earliest;
  }

  /** Up to `limit` live entries in service order: priority levels first, delayed requests last. */
  #head(limit: number): QueueEntry[] {
    const view: QueueEntry[] = [];
    for (const queue of this.#serviceOrder) {
      while (queue.length > 0 && queue.at(0)!.done) queue.shift();
      for (let i = 0; i < queue.length && view.length < limit; i++) {
        const entry = queue.at(i)!;
        if (!entry.done) view.push(entry);
      }
      if (view.length >= limit) break;
    }
    return view;
  }

  #take(count: number): QueueEntry[] {
    const taken: QueueEntry[] = [];
    for (const queue of this.#serviceOrder) {
      while (taken.length < count && queue.length > 0) {
        const entry = queue.shift()!;
        if (entry.done) continue;
        this.#forget(entry);
        taken.push(entry);
      }
    }
    return taken;
  }

  #armTimer(atUs: number): void {
    if (atUs === Infinity || (this.#timer !== undefined && this.#timerAtUs <= atUs)) return;
    this.#clearTimer();
    this.#timerAtUs = atUs;
    const delayMs = Math.max(0, (atUs - nowUs()) / 1000);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#timerAtUs = Infinity;
      this.#schedule();
    }, delayMs);
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAtUs = Infinity;
  }

  #dispatch(entries: QueueEntry[]): void {
    const instance = this.#pool.acquire()!;
    const seq = this.#nextDispatchSeq++;
    void this.#execute(instance, entries).then((deliver) => {
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
      const { assembledNs, endNs, backend, deliver } = instance.executeRequests !== undefined
        ? await this.#runPerRequest(instance, entries, startNs) : await this.#runBatched(instance, entries, startNs);
      const computeInputNs = Number(assembledNs - startNs) + backend.computeInputNs;
      const totalNs = Number(endNs - startNs);
      this.#listener.executed({
        batchSize: entries.reduce((sum, entry) => sum + entry.request.batchSize, 0), requestCount: entries.length,
        computeInputNs, computeInferNs: backend.computeInferNs,
        computeOutputNs: Math.max(0, totalNs - computeInputNs - backend.computeInferNs),
      });
      for (const entry of entries) if (entry.trace !== undefined) traceCompute(entry.trace, startNs, assembledNs, endNs, backend);
      return deliver;
    } catch (error) {
      const failure = asInferenceError(error);
      return () => entries.forEach((entry) => entry.reject(failure));
    }
  }

  /** The requests concatenated into one execution, its outputs cut back per request. */
  async #runBatched(instance: BackendInstance, entries: readonly QueueEntry[], startNs: bigint): Promise<Execution> {
    const requests = entries.map((entry) => entry.request);
    const inputs = assembleBatch(requests, this.#signature);
    const assembledNs = process.hrtime.bigint();
    const result = await instance.execute(inputs, this.#outputNames);
    const perRequest = splitBatch(result.outputs, requests, this.#signature);
    return {
      assembledNs, endNs: process.hrtime.bigint(), backend: result,
      deliver: () => entries.forEach((entry, i) => entry.resolve({ outputs: perRequest[i]!, queueNs: Number(startNs - entry.enqueueNs) })),
    };
  }

  /** For a backend that takes the batch request by request: each request gets its own outputs or error. */
  async #runPerRequest(instance: BackendInstance, entries: readonly QueueEntry[], startNs: bigint): Promise<Execution> {
    const requests = entries.map((entry) => ({
      inputs: assembleBatch([entry.request], this.#signature), parameters: entry.parameters,
      requestedOutputs: entry.request.outputs.map((output) => output.name),
    }));
    const assembledNs = process.hrtime.bigint();
    const result = await instance.executeRequests!(requests);
    if (result.responses.length !== entries.length) {
      throw new InferenceError("INTERNAL", `the model answered ${result.responses.length} responses to a batch of ${entries.length} requests`);
    }
    const answers = entries.map((entry, i): (() => void) => {
      const response = result.responses[i]!;
      if ("error" in response) {
        const error = new InferenceError(response.error.code, response.error.message);
        return () => entry.reject(error);
      }
      try {
        const outputs = requestOutputs(response.outputs, entry.request, this.#signature);
        return () => entry.resolve({ outputs, queueNs: Number(startNs - entry.enqueueNs) });
      } catch (error) {
        const failure = asInferenceError(error);
        return () => entry.reject(failure);
      }
    });
    return { assembledNs, endNs: process.hrtime.bigint(), backend: result, deliver: () => answers.forEach((answer) => answer()) };
  }
}

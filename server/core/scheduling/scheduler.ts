import type { BackendInstance, ExecutionResult } from "../../backends/backend";
import { assembleBatch, type BatchSignature, batchSignature, requestOutputs, splitBatch } from "./batch-tensors";
import { type BatchPolicy, decide, type PendingView } from "./batcher";
import { asInferenceError, InferenceError } from "../errors";
import type { CancellationSignal, InferenceTrace, ParameterValue } from "../request/inference-request";
import type { InstancePool } from "./instance-pool";
import type { ModelSignature } from "../model-config/model-signature";
import type { ExecutionTimings } from "../repository/model-statistics";
import type { ValidatedRequest } from "../request/request-validation";
import { PriorityQueue, type Queued, type QueuePolicy } from "./priority-queue";
import { userParameters } from "../request/reserved-parameters";
import type { RequestScheduler, ScheduledResult, ScheduleOptions } from "./request-scheduler";

export type { QueuePolicy };

export interface SchedulerSettings {
  readonly batch: BatchPolicy;
  /** Queue policy per priority level; index 0 is level 1, the highest. */
  readonly levels: readonly QueuePolicy[];
  /** Level used for priority 0 (1-based). */
  readonly defaultLevel: number;
  readonly preserveOrdering: boolean;
}

/** Reports of the scheduler's own work, for statistics and metrics. */
export interface SchedulerListener {
  executed(timings: ExecutionTimings): void;
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
  readonly onAbort: () => void;
  readonly resolve: (result: ScheduledResult) => void;
  readonly reject: (error: InferenceError) => void;
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
    this.#queue = new PriorityQueue(settings.levels, settings.defaultLevel);
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
    if (this.#closed) return Promise.reject(new InferenceError("UNAVAILABLE", "model is unloading"));
    const admission = this.#queue.admit(options.priority, options.timeoutUs);
    if (admission instanceof InferenceError) return Promise.reject(admission);
    if (options.signal?.aborted) return Promise.reject(new InferenceError("CANCELLED", "request was cancelled by the client"));
    options.trace?.timestamp("QUEUE_START", admission.enqueueNs);

    return new Promise<ScheduledResult>((resolve, reject) => {
      // The abort handler needs the entry's place in the queue, which exists once the entry is pushed (below).
      const entry: QueueEntry = {
        request, batchSize: request.batchSize, shapeKey: request.shapeKey, enqueueUs: admission.enqueueUs, enqueueNs: admission.enqueueNs,
        signal: options.signal, parameters: options.parameters ?? NO_PARAMETERS, trace: options.trace, onAbort: () => this.#cancel(queued), resolve, reject,
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
    const now = nowUs();
    const expired = this.#queue.expire(now);
    if (expired.length > 0) this.#fail(expired, new InferenceError("UNAVAILABLE", "Request timeout expired"));
    while (this.#pool.hasIdle) {
      const decision = decide(this.#queue.head(this.#settings.batch.maxBatchSize + 1), now, this.#settings.batch);
      if (decision.kind === "idle") break;
      if (decision.kind === "wait") {
        this.#armTimer(now + decision.us);
        return;
      }
      const entries = this.#queue.take(decision.count);
      for (const entry of entries) entry.signal?.removeEventListener("abort", entry.onAbort);
      this.#dispatch(entries);
    }
    this.#armTimer(this.#queue.nextDeadlineUs());
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
    const inputs = await assembleBatch(requests, this.#signature);
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
    const requests = [];
    for (const entry of entries) {
      requests.push({
        inputs: await assembleBatch([entry.request], this.#signature), parameters: userParameters(entry.parameters),
        requestedOutputs: entry.request.outputs.map((output) => output.name),
      });
    }
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

import { DrainLatch } from "./drain-latch";
import { monotonicClock } from "./clock";
import { WakeTimer } from "./wake-timer";
import type { BackendInstance } from "../../backends/backend";
import { type ExecutionContext, type ExecutionItem, executionTimings, runExecutions } from "./batch-execution";
import { batchSignature } from "./batch-tensors";
import { type BatchPolicy, decide, type PendingView } from "./batcher";
import { type DirectPolicy, directBatch } from "./direct-batch";
import { asInferenceError, InferenceError, invalidArg } from "../errors";
import type { CallLink, CancellationSignal, InferenceTrace, OutputTensor, ParameterValue } from "../request/inference-request";
import type { InstancePool } from "./instance-pool";
import type { ModelSignature } from "../model-config/model-signature";
import type { ValidatedRequest } from "../request/request-validation";
import type { RequestTimes } from "../request/request-times";
import type { RequestScheduler, ResponseSink, ScheduleOptions } from "./request-scheduler";
import type { SchedulerListener } from "./scheduler";
import { type ControlInputSpec, controlTensors, type SequenceRequest, sequenceRequestOf } from "./sequence-control";
import { type SequenceSlot, SequenceSlots } from "./sequence-slots";
import { type StateSpec, zeroState } from "./sequence-state";
import type { Tensor } from "../request/tensor";

export interface SequenceBatcherSettings {
  readonly strategy: "direct" | "oldest";
  /** Sequence slots per instance: max_batch_size (at least 1), or oldest's max_candidate_sequences. */
  readonly slotsPerInstance: number;
  /** max_sequence_idle_microseconds (normalized: never 0). */
  readonly idleUs: number;
  readonly controls: readonly ControlInputSpec[];
  readonly states: readonly StateSpec[];
  readonly direct: DirectPolicy;
  /** The oldest strategy's dynamic batcher on each instance. */
  readonly oldest: BatchPolicy;
}

interface Entry extends PendingView {
  /** Arrival; for Oldest, when it reached its instance's dynamic batcher (the queue delay counts from there, as Triton's batcher start). */
  enqueueUs: number;
  readonly request: ValidatedRequest;
  readonly sequence: SequenceRequest;
  readonly controls: readonly Tensor[];
  readonly parameters: Readonly<Record<string, ParameterValue>>;
  readonly signal: CancellationSignal | undefined;
  readonly trace: InferenceTrace | undefined;
  readonly chain: readonly CallLink[] | undefined;
  readonly onAbort: () => void;
  readonly sink: ResponseSink;
  readonly times: RequestTimes;
  slot: SequenceSlot<Entry> | undefined;
}

const NO_PARAMETERS: Readonly<Record<string, ParameterValue>> = Object.freeze({});
const hrtimeUs = (): number => Number(process.hrtime.bigint() / 1000n);

/**
 * Triton's sequence batcher (triton-inference-server/core src/sequence_batch_scheduler/): every instance has
 * `slotsPerInstance` sequence slots; a sequence holds one from its START to its END or idle timeout, and
 * sequences beyond the slots wait in a backlog ({@link SequenceSlots}). Per instance, one execution at a time:
 * - Direct: batch position i is slot i; each execution takes the next request of every slot up to the highest one
 *   with a request, empty positions filled with null requests (READY false) ({@link directBatch});
 * - Oldest: each slot hands its next request to the instance's dynamic batcher once the previous one finished, and
 *   batches form from those as the dynamic batcher forms them ({@link decide}).
 * The server fills the control inputs, and carries the implicit state (`sequence_batching.state`) of each slot from
 * one request's state output to the next request's state input; state outputs never reach the client.
 */
export class SequenceBatcher implements RequestScheduler {
  readonly #modelName: string;
  readonly #settings: SequenceBatcherSettings;
  readonly #batching: boolean;
  readonly #context: ExecutionContext;
  readonly #pool: InstancePool;
  readonly #listener: SchedulerListener;
  readonly #nowUs: () => number;
  readonly #slots: SequenceSlots<Entry>;
  /** Oldest: per instance, the requests handed to its dynamic batcher, in order. */
  readonly #ready: Entry[][];
  /** Per slot, the state inputs of its sequence's next request. */
  readonly #states = new Map<SequenceSlot<Entry>, Map<string, Tensor>>();
  #queued = 0;
  readonly #wake: WakeTimer;
  readonly #drain = new DrainLatch();

  constructor(modelName: string, signature: ModelSignature, settings: SequenceBatcherSettings, pool: InstancePool, listener: SchedulerListener, nowUs = hrtimeUs) {
    this.#modelName = modelName;
    this.#settings = settings;
    this.#batching = signature.maxBatchSize > 0;
    const base = batchSignature(signature);
    const stateOutputs = settings.states.map((state) => ({
      name: state.outputName, datatype: state.datatype, dims: state.initial.shape.slice(this.#batching ? 1 : 0), reshape: undefined, optional: false, labels: undefined,
    }));
    // The state inputs are among the signature's controls; the state outputs are the server's to read.
    const executionSignature = {
      ...base,
      outputs: [...base.outputs, ...stateOutputs],
      outputsByName: new Map([...base.outputsByName, ...stateOutputs.map((output) => [output.name, output] as const)]),
    };
    // A sequence model is never decoupled (the config validation refuses both).
    this.#context = { signature: executionSignature, decoupled: false, callerFor: listener.callerFor };
    this.#pool = pool;
    this.#listener = listener;
    this.#nowUs = nowUs;
    this.#wake = new WakeTimer(() => this.#schedule(), { ...monotonicClock, nowUs });
    this.#slots = new SequenceSlots(pool.slotCount, settings.slotsPerInstance, settings.idleUs);
    this.#ready = Array.from({ length: pool.slotCount }, () => []);
    pool.listen({
      available: () => this.#schedule(),
      allDown: (why) => this.#failQueued(new InferenceError("UNAVAILABLE", why)),
    });
  }

  get pendingCount(): number {
    return this.#queued;
  }

  get queueDepth(): number {
    return this.#queued;
  }

  enqueue(request: ValidatedRequest, options: ScheduleOptions): void {
    const { sink } = options;
    if (this.#drain.closed) return sink.send(new InferenceError("UNAVAILABLE", "model is unloading"), true);
    let sequence: SequenceRequest;
    let controls: Tensor[];
    try {
      sequence = sequenceRequestOf(this.#modelName, options.parameters, request.batchSize);
      controls = controlTensors(this.#settings.controls, this.#modelName, sequence, this.#batching);
    } catch (error) {
      return sink.send(asInferenceError(error), true);
    }
    if (options.signal?.aborted) return sink.send(new InferenceError("CANCELLED", "request was cancelled by the client"), true);
    options.times.queueStartNs = process.hrtime.bigint();
    const entry: Entry = {
      request, sequence, controls, batchSize: request.batchSize, shapeKey: request.shapeKey, enqueueUs: this.#nowUs(),
      parameters: options.parameters ?? NO_PARAMETERS, signal: options.signal, trace: options.trace, chain: options.chain,
      onAbort: () => this.#cancel(entry), sink, times: options.times, slot: undefined,
    };
    // An idle sequence ends before its late request is judged, whether or not the reaper's timer has fired yet.
    this.#reap(entry.enqueueUs);
    const admission = this.#slots.admit(sequence.key, sequence.start, sequence.end, entry, entry.enqueueUs, options.timeoutUs ?? 0);
    if (admission.kind === "not-started") {
      return sink.send(invalidArg(`inference request for sequence ${sequence.id} to model '${this.#modelName}' must specify the START flag on the first request of the sequence`), true);
    }
    this.#queued++;
    if (admission.kind === "slot") entry.slot = admission.slot;
    entry.signal?.addEventListener("abort", entry.onAbort, { once: true });
    if (admission.kind === "slot" && this.#settings.strategy === "oldest") this.#feed(admission.slot);
    this.#schedule();
  }

  close(): Promise<void> {
    const drained = this.#drain.drained();
    this.#resolveIfDrained();
    return drained;
  }

  refuseQueued(message: string): void {
    this.#drain.close();
    this.#failQueued(new InferenceError("UNAVAILABLE", message));
  }

  #resolveIfDrained(): void {
    if (this.#drain.settleIfIdle(this.#pool.busyCount === 0 && this.#queued === 0)) this.#wake.clear();
  }

  #failQueued(error: InferenceError): void {
    const handed = this.#ready.flatMap((ready) => ready.splice(0));
    // Their slots take the sequences' next requests again, should an instance come back.
    for (const entry of handed) entry.slot!.inFlight = false;
    for (const entry of [...this.#slots.drain(), ...handed]) this.#fail(entry, error);
    this.#resolveIfDrained();
  }

  #fail(entry: Entry, error: InferenceError): void {
    this.#queued--;
    entry.signal?.removeEventListener("abort", entry.onAbort);
    entry.sink.send(error, true);
  }

  /**
   * A request cancelled while waiting is never executed. Waiting in its slot or the backlog, it ends its sequence
   * and every request of it still queued is cancelled too (Triton's ReleaseSequenceSlot of a cancelled sequence);
   * already handed to an Oldest instance's dynamic batcher, it leaves alone, as there.
   */
  #cancel(entry: Entry): void {
    const ready = entry.slot === undefined ? -1 : this.#ready[entry.slot.instance]!.indexOf(entry);
    let cancelled = [entry];
    if (ready >= 0) {
      this.#ready[entry.slot!.instance]!.splice(ready, 1);
      entry.slot!.inFlight = false;
    } else {
      cancelled = this.#slots.cancel(entry);
    }
    for (const each of cancelled) this.#fail(each, new InferenceError("CANCELLED", "request was cancelled by the client"));
    if (cancelled.length === 0) return; // already executing
    if (entry.slot !== undefined) this.#next(entry.slot);
    this.#schedule();
    this.#resolveIfDrained();
  }

  /** Oldest: hands the slot's next request to its instance's dynamic batcher, unless one is executing. */
  #feed(slot: SequenceSlot<Entry>): void {
    if (slot.inFlight) return;
    const entry = slot.queue.shift();
    if (entry === undefined) return;
    slot.inFlight = true;
    entry.enqueueUs = this.#nowUs();
    this.#ready[slot.instance]!.push(entry);
  }

  /** After a slot's request left it: frees an ended slot (a backlogged sequence may take it), or feeds the next request. */
  #next(slot: SequenceSlot<Entry>): void {
    if (slot.ending && slot.queue.length === 0 && !slot.inFlight) {
      this.#states.delete(slot);
      const taken = this.#slots.settle(slot);
      if (taken !== undefined) for (const entry of taken.queue) entry.slot = taken;
    }
    if (this.#settings.strategy === "oldest") this.#feed(slot);
  }

  /**
   * Triton's reaper: ends the sequences idle too long, and fails the backlogged sequences whose `timeout` passed
   * (UNAVAILABLE, Triton's message); returns when to look again.
   */
  #reap(now: number): number {
    const reaped = this.#slots.reap(now);
    for (const slot of reaped.ended) this.#next(slot);
    const expiry = this.#slots.expire(now);
    for (const entry of expiry.expired) this.#fail(entry, new InferenceError("UNAVAILABLE", "timeout of the corresponding sequence has been expired"));
    if (expiry.expired.length > 0) this.#resolveIfDrained();
    return Math.min(reaped.nextUs, expiry.nextUs);
  }

  #schedule(): void {
    const now = this.#nowUs();
    let wakeUs = this.#reap(now);
    for (let instance = 0; instance < this.#ready.length; instance++) {
      wakeUs = Math.min(wakeUs, this.#settings.strategy === "direct" ? this.#runDirect(instance, now) : this.#runOldest(instance, now));
    }
    this.#armTimer(wakeUs);
  }

  /** Starts the instance's next Direct batch if it is idle; returns when to look again (Infinity: on a change). */
  #runDirect(instance: number, now: number): number {
    const slots = this.#slots.slots[instance]!;
    const decision = directBatch(slots.map((slot) => slot.queue[0]), now, this.#settings.direct);
    if (decision.kind === "idle") return Infinity;
    if (decision.kind === "wait") return now + decision.us;
    const backend = this.#pool.acquireAt(instance);
    if (backend === undefined) return Infinity;
    const positions = decision.positions.map((position, i) => (position === "request" ? slots[i]!.queue.shift()! : undefined));
    this.#dispatch(backend, positions);
    // Only once the batch holds its state inputs: an END frees its slot now (Triton's ReleaseSequenceSlot at dispatch).
    for (const entry of positions) if (entry !== undefined) this.#next(entry.slot!);
    return Infinity;
  }

  #runOldest(instance: number, now: number): number {
    const ready = this.#ready[instance]!;
    const decision = decide(ready, now, this.#settings.oldest);
    if (decision.kind === "idle") return Infinity;
    if (decision.kind === "wait") return now + decision.us;
    const backend = this.#pool.acquireAt(instance);
    if (backend === undefined) return Infinity;
    this.#dispatch(backend, ready.splice(0, decision.count));
    return Infinity;
  }

  /** The state inputs of a slot's request: its sequence's state, from the start values at START. */
  #stateInputs(entry: Entry): Map<string, Tensor> {
    const slot = entry.slot!;
    let states = this.#states.get(slot);
    if (states === undefined || entry.sequence.start) {
      states = new Map(this.#settings.states.map((state) => [state.inputName, state.initial]));
      this.#states.set(slot, states);
    }
    return states;
  }

  /** What the backend gets for one batch position: a request with its controls and state, or a null request. */
  #item(entry: Entry | undefined, representative: Entry): ExecutionItem {
    const stateOutputs = this.#settings.states.map((state) => ({ name: state.outputName }));
    const base = entry ?? representative;
    const inputs = new Map(base.request.inputs);
    const controls = entry?.controls ?? controlTensors(this.#settings.controls, this.#modelName, undefined, this.#batching);
    for (const control of controls) inputs.set(control.name, control);
    if (this.#settings.states.length > 0) {
      // A null request gets zeros shaped like the representative's state (Triton's SequenceStates::CopyAsNull): no sequence's state is read or changed.
      const states = this.#stateInputs(base);
      for (const [name, tensor] of states) inputs.set(name, entry === undefined ? zeroState(tensor) : tensor);
    }
    return {
      request: { ...base.request, inputs, outputs: [...base.request.outputs, ...stateOutputs] },
      parameters: entry?.parameters ?? NO_PARAMETERS, sink: entry?.sink, signal: entry?.signal, trace: entry?.trace, chain: entry?.chain,
    };
  }

  #dispatch(instance: BackendInstance, positions: readonly (Entry | undefined)[]): void {
    const entries = positions.filter((entry) => entry !== undefined);
    this.#queued -= entries.length;
    for (const entry of entries) entry.signal?.removeEventListener("abort", entry.onAbort);
    const representative = entries[0]!;
    const items = positions.map((entry) => this.#item(entry, representative));
    void this.#execute(instance, positions, items).then(() => {
      this.#pool.release(instance);
      for (const entry of entries) {
        entry.slot!.inFlight = false;
        this.#next(entry.slot!);
      }
      this.#schedule();
      this.#resolveIfDrained();
    });
  }

  /** Runs one batch and answers its requests; never rejects. */
  async #execute(instance: BackendInstance, positions: readonly (Entry | undefined)[], items: readonly ExecutionItem[]): Promise<void> {
    const startNs = process.hrtime.bigint();
    const entries = positions.filter((entry) => entry !== undefined);
    for (const entry of entries) entry.times.computeStartNs = startNs;
    const { outcomes: [outcome], results: [results] } = await runExecutions(instance, [items], this.#context, startNs);
    if (outcome !== undefined) this.#listener.executed(executionTimings(outcome, positions.length, entries.length));
    positions.forEach((entry, i) => {
      if (entry === undefined) return;
      if (entry.trace !== undefined && outcome !== undefined) entry.times.execution = outcome;
      const result = results![i];
      if (result !== undefined) entry.sink.send(result instanceof InferenceError ? result : this.#keepState(entry, result), true);
    });
  }

  /** Stores the request's state outputs as its sequence's next state inputs; returns the outputs the client may see. */
  #keepState(entry: Entry, outputs: OutputTensor[]): OutputTensor[] {
    if (this.#settings.states.length === 0) return outputs;
    const states = this.#states.get(entry.slot!);
    const stateNames = new Set(this.#settings.states.map((state) => state.outputName));
    if (states !== undefined && !entry.sequence.end) {
      for (const state of this.#settings.states) {
        const output = outputs.find((o) => o.name === state.outputName);
        if (output !== undefined) states.set(state.inputName, { name: state.inputName, datatype: output.datatype, shape: output.shape, data: output.data.slice() });
      }
    }
    return outputs.filter((output) => !stateNames.has(output.name));
  }

  #armTimer(atUs: number): void {
    if (!(this.#drain.closed && this.#queued === 0)) this.#wake.armAt(atUs);
  }
}

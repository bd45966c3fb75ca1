import type { InferenceTrace } from "./inference-request";

/**
 * What the execution that ran a request measured: when its batch was assembled and its outputs were back, and the
 * backend's own input and infer durations (on its thread). Kept as is; the COMPUTE_* moments are derived only for a
 * trace, so an untraced request pays no arithmetic for them.
 */
export interface ExecutionMoments {
  readonly assembledNs: bigint;
  readonly endNs: bigint;
  readonly backend: { readonly computeInputNs: number; readonly computeInferNs: number };
}

/**
 * One request's own clock readings (process.hrtime.bigint(), one clock for every thread), each written where its
 * moment happens: the core at the start and the end, the scheduler when the request enters its queue and when its
 * execution starts and ends (Triton's InferenceRequest timestamps, infer_request.h).
 * Statistics, metrics and traces read them from here once the request is over, for every kind of model, so a
 * model that answers inside its execution is charged the queue time it really waited. 0n: not reached.
 */
export class RequestTimes {
  readonly startNs: bigint;
  queueStartNs = 0n;
  computeStartNs = 0n;
  /** A traced request's execution, once it ended (COMPUTE_INPUT_END, COMPUTE_OUTPUT_START, COMPUTE_END). */
  execution: ExecutionMoments | undefined;
  endNs = 0n;

  constructor(startNs = process.hrtime.bigint()) {
    this.startNs = startNs;
  }

  /** From entering a scheduler's queue to its execution's start; 0 for a request that never ran on an instance. */
  get queueNs(): number {
    return this.computeStartNs === 0n || this.queueStartNs === 0n ? 0 : Number(this.computeStartNs - this.queueStartNs);
  }

  get requestNs(): number {
    return Number(this.endNs - this.startNs);
  }

  /** Triton's TIMESTAMPS-level trace of the request, in the order Triton records them; the moments not reached are left out. */
  writeTrace(trace: InferenceTrace): void {
    trace.timestamp("REQUEST_START", this.startNs);
    if (this.queueStartNs !== 0n) trace.timestamp("QUEUE_START", this.queueStartNs);
    if (this.computeStartNs !== 0n) trace.timestamp("COMPUTE_START", this.computeStartNs);
    const execution = this.execution;
    if (execution !== undefined) {
      // The backend's phases are durations on its own thread: placed after the batch was assembled, and never past
      // the end the scheduler saw.
      const { assembledNs, endNs, backend } = execution;
      const inputEndNs = assembledNs + BigInt(Math.round(backend.computeInputNs));
      const clamp = (ns: bigint): bigint => (ns < endNs ? ns : endNs);
      trace.timestamp("COMPUTE_INPUT_END", clamp(inputEndNs));
      trace.timestamp("COMPUTE_OUTPUT_START", clamp(inputEndNs + BigInt(Math.round(backend.computeInferNs))));
      trace.timestamp("COMPUTE_END", endNs);
    }
    trace.timestamp("REQUEST_END", this.endNs);
  }
}

import type { InferenceTrace, TensorActivity, Tensor, TraceActivity } from "../core/index";
import { tensorTraceData } from "./tensor-trace-data";
import type { TraceLevel } from "./trace-settings";

/**
 * The bytes one sampled request's tensor entries (its steps' included) may take. A trace past them is dropped whole,
 * as its file would drop it, but before its tensors are rendered: a traced request with huge tensors costs no more.
 * Timestamps are left to the file's own bound: they are small and their number is fixed.
 */
export class TraceBudget {
  #remaining: number;
  #exceeded = false;

  constructor(bytes: number) {
    this.#remaining = bytes;
  }

  get remaining(): number {
    return this.#remaining;
  }

  get exceeded(): boolean {
    return this.#exceeded;
  }

  /** Whether `bytes` more fit; once they do not, the trace stays over budget. */
  take(bytes: number): boolean {
    if (this.#exceeded) return false;
    this.#remaining -= bytes;
    if (this.#remaining < 0) this.exceed();
    return !this.#exceeded;
  }

  exceed(): void {
    this.#exceeded = true;
  }
}

/**
 * One sampled request's trace, in Triton's file format: a model entry (`{"id","model_name","model_version"}`,
 * with `request_id` when the request has one and `parent_id` for an ensemble's step) and one
 * `{"id","timestamps":[{"name","ns"}]}` object per timestamp, in the order they were taken. `ns` is
 * `process.hrtime.bigint()`: a monotonic clock, as Triton's steady clock. At the TENSORS level, one
 * `{"id","activity","tensor":{"name","data","shape","dtype"}}` per tensor, as Triton's TraceTensorActivity writes it.
 * Without TIMESTAMPS there is no model entry either: Triton writes it with REQUEST_START. The frontend that sampled
 * the request ends it once its response is sent; `end` hands the objects on once, the steps' traces after the
 * request's own, or undefined for a trace past its budget.
 */
export class RequestTrace implements InferenceTrace {
  readonly #level: TraceLevel;
  readonly #budget: TraceBudget;
  readonly #timestamps: boolean;
  readonly #tensors: boolean;
  readonly #id: number;
  readonly #parentId: number | undefined;
  readonly #nextId: () => number;
  readonly #objects: string[] = [];
  readonly #children: RequestTrace[] = [];
  readonly #finished: (objects: string | undefined) => void;
  #ended = false;

  constructor(level: TraceLevel, budget: TraceBudget, nextId: () => number, finished: (objects: string | undefined) => void, parentId?: number) {
    this.#level = level;
    this.#budget = budget;
    this.#timestamps = level.includes("TIMESTAMPS");
    this.#tensors = level.includes("TENSORS");
    this.#id = nextId();
    this.#nextId = nextId;
    this.#finished = finished;
    this.#parentId = parentId;
  }

  model(name: string, version: number, requestId: string | undefined): void {
    if (!this.#timestamps) return;
    const request = requestId === undefined || requestId === "" ? "" : `,"request_id":${JSON.stringify(requestId)}`;
    const parent = this.#parentId === undefined ? "" : `,"parent_id":${this.#parentId}`;
    this.#objects.push(`{"id":${this.#id},"model_name":${JSON.stringify(name)},"model_version":${version}${request}${parent}}`);
  }

  timestamp(activity: TraceActivity, ns: bigint): void {
    if (!this.#timestamps) return;
    this.#objects.push(`{"id":${this.#id},"timestamps":[{"name":"${activity}","ns":${ns}}]}`);
  }

  /** Triton writes the shape and the values as strings, the values as {@link tensorTraceData} renders them. */
  tensors(activity: TensorActivity, tensors: Iterable<Tensor>): void {
    if (!this.#tensors) return;
    for (const tensor of tensors) {
      if (this.#budget.exceeded) return;
      const data = tensorTraceData(tensor, this.#budget.remaining);
      if (data === undefined) return this.#budget.exceed();
      const entry = `{"name":${JSON.stringify(tensor.name)},"data":${JSON.stringify(data)},"shape":"${tensor.shape.join(",")}","dtype":"${tensor.datatype}"}`;
      const object = `{"id":${this.#id},"activity":"${activity}","tensor":${entry}}`;
      if (this.#budget.take(object.length)) this.#objects.push(object);
    }
  }

  child(): RequestTrace {
    const child = new RequestTrace(this.#level, this.#budget, this.#nextId, () => undefined, this.#id);
    this.#children.push(child);
    return child;
  }

  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#finished(this.#budget.exceeded ? undefined : this.#collect());
  }

  #collect(): string {
    return [...this.#objects, ...this.#children.map((child) => child.#collect())].filter((part) => part !== "").join(",");
  }
}

import type { InferenceTrace, TraceActivity } from "../core/index";

/**
 * One sampled request's trace, in Triton's file format: a model entry (`{"id","model_name","model_version"}`,
 * with `request_id` when the request has one and `parent_id` for an ensemble's step) and one
 * `{"id","timestamps":[{"name","ns"}]}` object per timestamp, in the order they were taken. `ns` is
 * `process.hrtime.bigint()`: a monotonic clock, as Triton's steady clock. The frontend that sampled the request
 * ends it once its response is sent; `end` hands the objects on once, the steps' traces after the request's own.
 */
export class RequestTrace implements InferenceTrace {
  readonly #id: number;
  readonly #parentId: number | undefined;
  readonly #nextId: () => number;
  readonly #objects: string[] = [];
  readonly #children: RequestTrace[] = [];
  readonly #finished: (objects: string) => void;
  #ended = false;

  constructor(nextId: () => number, finished: (objects: string) => void, parentId?: number) {
    this.#id = nextId();
    this.#nextId = nextId;
    this.#finished = finished;
    this.#parentId = parentId;
  }

  model(name: string, version: number, requestId: string | undefined): void {
    const request = requestId === undefined || requestId === "" ? "" : `,"request_id":${JSON.stringify(requestId)}`;
    const parent = this.#parentId === undefined ? "" : `,"parent_id":${this.#parentId}`;
    this.#objects.push(`{"id":${this.#id},"model_name":${JSON.stringify(name)},"model_version":${version}${request}${parent}}`);
  }

  timestamp(activity: TraceActivity, ns: bigint): void {
    this.#objects.push(`{"id":${this.#id},"timestamps":[{"name":"${activity}","ns":${ns}}]}`);
  }

  child(): RequestTrace {
    const child = new RequestTrace(this.#nextId, () => undefined, this.#id);
    this.#children.push(child);
    return child;
  }

  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#finished(this.#collect());
  }

  #collect(): string {
    return [...this.#objects, ...this.#children.map((child) => child.#collect())].filter((part) => part !== "").join(",");
  }
}

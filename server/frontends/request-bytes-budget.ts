import { InferenceError } from "../core/index";

/**
 * The budget is full: answered as a full queue is (HTTP 503), but RESOURCE_EXHAUSTED over gRPC, which tells
 * clients the server is short of memory rather than down.
 */
export class RequestBudgetExceeded extends InferenceError {
  constructor(limitBytes: number, wantedBytes: number) {
    super("UNAVAILABLE", `requests in flight hold more than the server's budget of ${limitBytes} bytes (--max-inflight-request-bytes); this request needs ${wantedBytes}: retry later`);
  }
}

/**
 * Bytes held by one request against the server-wide budget: its body or message, then its decoded tensors. Grows
 * as the request is read and decoded; released once, when it is answered or abandoned.
 */
export class BudgetLease {
  #held = 0;
  #released = false;

  constructor(private readonly budget: RequestBytesBudget) {}

  get heldBytes(): number {
    return this.#held;
  }

  /** Holds `bytes` in all (at least what is held); throws {@link RequestBudgetExceeded} when the budget cannot. */
  holdAtLeast(bytes: number): void {
    if (this.#released || bytes <= this.#held) return;
    this.budget.take(bytes - this.#held, bytes);
    this.#held = bytes;
  }

  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.budget.give(this.#held);
  }
}

/**
 * The server-wide budget for bytes of requests in flight (bodies, gRPC messages and the tensors decoded from them),
 * shared by both frontends. A request that would overfill it is refused before it is decoded or queued, so that
 * many large requests at once cannot take the process's memory; a single request larger than the whole budget is
 * always refused.
 */
export class RequestBytesBudget {
  #inFlight = 0;

  constructor(readonly limitBytes: number) {}

  get inFlightBytes(): number {
    return this.#inFlight;
  }

  lease(): BudgetLease {
    return new BudgetLease(this);
  }

  /** @internal for {@link BudgetLease}: `requestBytes` is the request's whole size, for the message. */
  take(bytes: number, requestBytes: number): void {
    if (this.#inFlight + bytes > this.limitBytes) throw new RequestBudgetExceeded(this.limitBytes, requestBytes);
    this.#inFlight += bytes;
  }

  /** @internal for {@link BudgetLease}. */
  give(bytes: number): void {
    this.#inFlight -= bytes;
  }
}

/**
 * Bytes of memory the views keep alive: each distinct buffer once, so tensors that view a body (binary data, gRPC
 * raw contents) are not counted twice.
 */
export function retainedBytes(views: Iterable<ArrayBufferView | undefined>): number {
  const buffers = new Set<ArrayBufferLike>();
  let bytes = 0;
  for (const view of views) {
    if (view === undefined || buffers.has(view.buffer)) continue;
    buffers.add(view.buffer);
    bytes += view.buffer.byteLength;
  }
  return bytes;
}

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
 * A request larger than the whole budget: no wait makes it fit, so it is refused as too large (HTTP 400, as a body
 * over --http-max-input-size) rather than "retry later"; over gRPC RESOURCE_EXHAUSTED, as a message over its limit.
 */
export class RequestLargerThanBudget extends InferenceError {
  constructor(limitBytes: number, wantedBytes: number) {
    super("INVALID_ARG", `request of at least ${wantedBytes} bytes exceeds the server's in-flight budget of ${limitBytes} bytes (--max-inflight-request-bytes)`);
  }
}

/**
 * Bytes held by one request against the server-wide budget: its body or message as its bytes arrive (and as a
 * decompressor produces them), then its decoded tensors. Grows as the request is read and decoded; released once,
 * when it is answered or abandoned.
 */
export class BudgetLease {
  #held = 0;
  #released = false;

  constructor(private readonly budget: RequestBytesBudget) {}

  get heldBytes(): number {
    return this.#held;
  }

  /**
   * Holds `bytes` in all (at least what is held); throws {@link RequestLargerThanBudget} when `bytes` is more than
   * the whole budget, {@link RequestBudgetExceeded} when the others in flight leave too little of it.
   */
  holdAtLeast(bytes: number): void {
    if (this.#released || bytes <= this.#held) return;
    this.budget.take(bytes - this.#held, bytes);
    this.#held = bytes;
  }

  /** Throws {@link RequestLargerThanBudget} when `bytes` (a size announced before its bytes arrive) can never be held. */
  refuseIfNeverFits(bytes: number): void {
    this.budget.refuseIfNeverFits(bytes);
  }

  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.budget.give(this.#held);
  }
}

/**
 * The server-wide budget for bytes of requests in flight (bodies, gRPC messages and the tensors decoded from them),
 * shared by both frontends. Requests take it as their bytes arrive, not from the sizes they announce (a client that
 * announces much and sends little holds only what it sent); one that would overfill it is refused there, before
 * more of it is read, decompressed, decoded or queued, so that many large requests at once cannot take the
 * process's memory.
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

  /** @internal for {@link BudgetLease}. */
  refuseIfNeverFits(requestBytes: number): void {
    if (requestBytes > this.limitBytes) throw new RequestLargerThanBudget(this.limitBytes, requestBytes);
  }

  /** @internal for {@link BudgetLease}: `requestBytes` is the request's whole size, for the message. */
  take(bytes: number, requestBytes: number): void {
    this.refuseIfNeverFits(requestBytes);
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

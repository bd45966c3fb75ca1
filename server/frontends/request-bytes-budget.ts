import { type DataType, ELEMENT_BYTE_SIZE, InferenceError, type InferRequest, type ModelHandle } from "../core/index";
import { releaseMemoryNow } from "./release-memory";

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
 * decompressor produces them), the copies made while it is read (a joined body, its JSON text), then its decoded
 * tensors and, once admitted, the copies it will cost later ({@link bytesAfterAdmission}). Grows as the request is
 * read and decoded; released once, when it is answered or abandoned.
 */
export class BudgetLease {
  #held = 0;
  #released = false;
  #admitted = false;

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
    this.budget.take(bytes - this.#held, bytes, this.#admitted);
    this.#held = bytes;
  }

  /**
   * Holds `bytes` beside what is held: a copy of bytes already held (a body's chunks joined, its JSON text, the
   * batch copy of its tensors), which {@link holdAtLeast} would take for the same bytes. Throws as it does.
   */
  holdMore(bytes: number): void {
    if (this.#released || bytes <= 0) return;
    this.budget.take(bytes, this.#held + bytes, this.#admitted);
    this.#held += bytes;
  }

  /**
   * Admits the request: holds `laterBytes` more, the copies it will cost once queued ({@link bytesAfterAdmission}),
   * refused as {@link holdMore} is (too large when they and what it holds are more than the whole budget), except
   * while no other admitted request holds any of the budget: then they are held past it. Requests whose bodies
   * arrived together can fill the budget between them and leave none room for its copies; one of them still goes
   * through, and the budget is overdrawn by one request's copies at most.
   */
  admit(laterBytes: number): void {
    if (this.#released || this.#admitted) return;
    this.budget.refuseIfNeverFits(this.#held + laterBytes);
    if (this.budget.admittedBytes === 0) this.budget.overdraw(laterBytes);
    else this.budget.take(laterBytes, this.#held + laterBytes, false);
    this.#held += laterBytes;
    this.#admitted = true;
    this.budget.countAdmitted(this.#held);
  }

  /**
   * Holds `bytes` in all (at least what is held) even past the budget, never refusing: for bytes that cannot be
   * refused where they arrive (a ModelStreamInfer message: refused part-way, its whole stream would end). The others
   * in flight are refused while they are held.
   */
  overdrawAtLeast(bytes: number): void {
    if (this.#released || bytes <= this.#held) return;
    this.budget.overdraw(bytes - this.#held);
    if (this.#admitted) this.budget.countAdmitted(bytes - this.#held);
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
    if (this.#admitted) this.budget.countAdmitted(-this.#held);
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
  #admitted = 0;

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

  /** What admitted requests (queued, running or being answered) hold of {@link inFlightBytes}. */
  get admittedBytes(): number {
    return this.#admitted;
  }

  /**
   * @internal for {@link BudgetLease}: `requestBytes` is the request's whole size, for the message; an `admitted`
   * request's holds count among {@link admittedBytes}.
   */
  take(bytes: number, requestBytes: number, admitted: boolean): void {
    this.refuseIfNeverFits(requestBytes);
    if (this.#inFlight + bytes > this.limitBytes) throw new RequestBudgetExceeded(this.limitBytes, requestBytes);
    this.#inFlight += bytes;
    if (admitted) this.#admitted += bytes;
  }

  /** @internal for {@link BudgetLease}. */
  countAdmitted(bytes: number): void {
    this.#admitted += bytes;
  }

  /** @internal for {@link BudgetLease}: takes `bytes` whether they fit or not. */
  overdraw(bytes: number): void {
    this.#inFlight += bytes;
  }

  /** @internal for {@link BudgetLease}. */
  give(bytes: number): void {
    this.#inFlight -= bytes;
  }
}

/**
 * Runs `hold` (holds of a request not queued yet: its JSON text, its decoded tensors and later copies); when the
 * budget refuses the request, the memory of its large buffers (`views`: its body or message and its decoded
 * tensors, which nothing else shares) goes at once ({@link releaseMemoryNow}), as its bytes leave the budget, and
 * the refusal is thrown on.
 */
export function holdOrLetGo(views: readonly (ArrayBufferView | undefined)[], hold: () => void): void {
  try {
    hold();
  } catch (error) {
    if (error instanceof RequestBudgetExceeded || error instanceof RequestLargerThanBudget) {
      for (const buffer of new Set(views.map((view) => view?.buffer))) if (buffer !== undefined) releaseMemoryNow(buffer);
    }
    throw error;
  }
}

/**
 * Admits a request before it is queued (the last point where a refusal is clean): holds the memory its `views` keep
 * alive (body or message, decoded tensors), then what it will cost once admitted ({@link bytesAfterAdmission}; over
 * gRPC with its response `frame`, which reuses the request's memory when that is freed before it is made). On a
 * refusal the views' memory goes at once ({@link holdOrLetGo}) and the refusal is thrown on.
 */
export function admitHeld(
  lease: BudgetLease | undefined, views: readonly (ArrayBufferView | undefined)[], model: Pick<ModelHandle, "inputs" | "tensors">,
  request: Pick<InferRequest, "inputs" | "outputs">, frame?: { readonly reusesRequestMemory: boolean },
): void {
  if (lease === undefined) return;
  holdOrLetGo(views, () => {
    const retained = retainedBytes(views);
    lease.holdAtLeast(retained);
    lease.admit(bytesAfterAdmission(model, request, frame === undefined ? undefined : { reusesBytes: frame.reusesRequestMemory ? retained : 0 }));
  });
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

/**
 * What an admitted request will still cost beyond its decoded tensors, held with them before it is queued (the last
 * point where a refusal is clean: an admitted request is never failed for memory):
 *
 * - the batch copy of its inputs, which every backend makes (gatherInputs, server/backends/batch-io.ts);
 * - its outputs: exactly where the config fixes their shape (the batch dimension from the request's first input),
 *   else, for an output of variable shape or of BYTES, as much as its inputs once for all of them (an estimate:
 *   outputs larger than their inputs are counted short by the difference);
 * - with `frame` (gRPC), the response message, which copies the outputs once more (framed-infer-response.ts),
 *   beyond the request's own memory it is made after, freed by then (`frame.reusesBytes`). A REST response streams
 *   its outputs without copying them.
 */
export function bytesAfterAdmission(model: Pick<ModelHandle, "inputs" | "tensors">, request: Pick<InferRequest, "inputs" | "outputs">, frame?: { readonly reusesBytes: number }): number {
  let inputBytes = 0;
  for (const input of request.inputs) inputBytes += input.data.byteLength;
  const batching = model.inputs().batching;
  const batchSize = request.inputs[0]?.shape[0] ?? 1;
  const requested = request.outputs === undefined || request.outputs.length === 0 ? undefined : new Set(request.outputs.map((output) => output.name));
  let outputBytes = 0;
  let variable = false;
  for (const output of model.tensors().outputs) {
    if (requested !== undefined && !requested.has(output.name)) continue;
    // Metadata's shape leads with -1 for the batch dimension of a model that batches.
    const shape = batching ? [batchSize, ...output.shape.slice(1)] : output.shape;
    const elementBytes = ELEMENT_BYTE_SIZE[output.datatype as DataType] ?? 0;
    if (elementBytes === 0 || shape.some((dim) => dim < 0)) variable = true;
    else outputBytes += shape.reduce((product, dim) => product * dim, elementBytes);
  }
  if (variable) outputBytes += inputBytes;
  return inputBytes + outputBytes + (frame === undefined ? 0 : Math.max(0, outputBytes - frame.reusesBytes));
}

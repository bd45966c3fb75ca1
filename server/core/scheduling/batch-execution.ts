import type { BackendInstance, BackendRequest, BackendResponder, BackendResponse, ExecutionTimes, ModelCaller, TensorMap } from "../../backends/backend";
import { backendInputs, type BatchSignature, requestOutputs } from "./batch-tensors";
import { asInferenceError, InferenceError } from "../errors";
import type { CallLink, CancellationSignal, InferenceTrace, OutputTensor, ParameterValue } from "../request/inference-request";
import type { CallOrigin } from "./model-calls";
import type { ExecutionTimings } from "../repository/model-statistics";
import type { ExecutionMoments } from "../request/request-times";
import type { ValidatedRequest } from "../request/request-validation";
import { userParameters } from "../request/reserved-parameters";
import type { ResponseSink } from "./request-scheduler";

/** One request of an execution, as the backend gets it. */
export interface ExecutionItem {
  readonly request: ValidatedRequest;
  readonly parameters: Readonly<Record<string, ParameterValue>>;
  /**
   * Where its responses go: a decoupled model's straight from the backend; for any other model, the scheduler
   * delivers the one answer once the execution is over. Undefined: nothing waits for it (a sequence's null request).
   */
  readonly sink?: ResponseSink | undefined;
  /** What a call the model makes to another model (BLS) inherits from this request. */
  readonly signal?: CancellationSignal | undefined;
  readonly trace?: InferenceTrace | undefined;
  readonly chain?: readonly CallLink[] | undefined;
}

/** How a scheduler runs executions on one model version's instances. */
export interface ExecutionContext {
  readonly signature: BatchSignature;
  /** Whether the model is decoupled: its responses reach the sinks as the backend sends them. */
  readonly decoupled: boolean;
  readonly callerFor?: ((origin: CallOrigin) => ModelCaller) | undefined;
}

/** One execution's moments, as its statistics and traces read them; `startNs` on the scheduler's clock for the first. */
export interface ExecutionOutcome extends ExecutionMoments {
  readonly startNs: bigint;
}

/** What a request is still owed once its execution is over: its answer or error, or nothing (a decoupled request answered its sink). */
export type ItemResult = OutputTensor[] | InferenceError | undefined;

export interface ExecutionsRun {
  /** Per execution, in order: its moments, or undefined where it failed as a whole (it is not counted). */
  readonly outcomes: readonly (ExecutionOutcome | undefined)[];
  /** Per execution, per item, what the scheduler delivers. */
  readonly results: readonly (readonly ItemResult[])[];
}

/**
 * Runs the executions on `instance` in one call (the backend seam), `startNs` being when the first began. Never
 * rejects: an instance that failed fails every request not answered yet. The first execution is timed from
 * `startNs` (it includes handing the call over), the last until the call is back here, those between by the
 * backend's own clock.
 */
export async function runExecutions(
  instance: BackendInstance, executions: readonly (readonly ExecutionItem[])[], context: ExecutionContext, startNs: bigint,
): Promise<ExecutionsRun> {
  const requests = executions.map((items) => items.map((item) => new ItemRequest(item, instance, context)));
  let times: readonly (ExecutionTimes | undefined)[] = [];
  let failure: InferenceError | undefined;
  try {
    times = await instance.execute(requests);
    if (times.length !== executions.length) throw new InferenceError("INTERNAL", `the backend reported ${times.length} executions of ${executions.length}`);
  } catch (error) {
    failure = asInferenceError(error);
  }
  const endNs = process.hrtime.bigint();
  const last = executions.length - 1;
  return {
    outcomes: executions.map((_, e): ExecutionOutcome | undefined => {
      const backend = times[e];
      if (backend === undefined || failure !== undefined) return undefined;
      return { startNs: e === 0 ? startNs : backend.startNs, assembledNs: backend.startNs, endNs: e === last ? endNs : backend.endNs, backend };
    }),
    results: requests.map((items) => items.map((request) => request.responder.settle(failure))),
  };
}

/**
 * One item as the backend sees it. Its parameters and the caller for its model calls are made when a backend first
 * asks (most never do), sparing every request of every execution their cost; the caller of a request that is itself
 * a model call is made at once, since making it records which instance runs that call (deadlock detection).
 */
class ItemRequest implements BackendRequest {
  readonly inputs: TensorMap;
  readonly batchSize: number;
  readonly responder: ItemResponder;
  readonly #item: ExecutionItem;
  readonly #instance: BackendInstance;
  readonly #context: ExecutionContext;
  #caller: ModelCaller | undefined;

  constructor(item: ExecutionItem, instance: BackendInstance, context: ExecutionContext) {
    this.inputs = backendInputs(item.request, context.signature);
    this.batchSize = item.request.batchSize;
    this.responder = new ItemResponder(item, context);
    this.#item = item;
    this.#instance = instance;
    this.#context = context;
    if (item.chain !== undefined) this.#caller = this.caller;
  }

  get parameters(): Readonly<Record<string, ParameterValue>> {
    return userParameters(this.#item.parameters);
  }

  get requestedOutputs(): readonly string[] {
    return this.#item.request.outputs.map((output) => output.name);
  }

  get caller(): ModelCaller | undefined {
    const item = this.#item;
    this.#caller ??= this.#context.callerFor?.({ holder: this.#instance, chain: item.chain, signal: item.signal, trace: item.trace });
    return this.#caller;
  }
}

/**
 * One request's responder: each response checked against the config and mapped back to the client's shapes. A
 * decoupled request's go straight to its sink; another's one answer waits here, since the scheduler delivers it
 * after the instance is released (the next execution starts sooner). What comes after the final flag is dropped.
 */
class ItemResponder implements BackendResponder {
  readonly #item: ExecutionItem;
  readonly #context: ExecutionContext;
  #answer: OutputTensor[] | InferenceError | undefined;
  #final = false;

  constructor(item: ExecutionItem, context: ExecutionContext) {
    this.#item = item;
    this.#context = context;
  }

  send(response: BackendResponse | undefined, final: boolean): void {
    if (this.#final) return;
    this.#final = final;
    const result = response === undefined ? undefined : outputsOf(response, this.#item.request, this.#context.signature);
    if (this.#context.decoupled) this.#item.sink?.send(result, final);
    else this.#answer ??= result;
  }

  get cancelled(): boolean {
    return this.#item.sink?.cancelled ?? false;
  }

  onCancel(listener: () => void): void {
    this.#item.sink?.onCancel(listener);
  }

  get ready(): boolean {
    return this.#item.sink?.ready ?? true;
  }

  onReady(listener: () => void): void {
    if (this.#item.sink === undefined) listener();
    else this.#item.sink.onReady(listener);
  }

  /** What the request is owed once the execution is over; `failure`: why the instance failed. */
  settle(failure: InferenceError | undefined): ItemResult {
    // A decoupled request's sink drops the failure if the backend ended it already.
    if (this.#context.decoupled) return failure;
    return this.#answer ?? failure ?? new InferenceError("INTERNAL", "the backend sent no response to a request of a model that is not decoupled");
  }
}

/** One response of the backend as the request's outputs (the requested ones, checked), or its error. */
function outputsOf(response: BackendResponse, request: ValidatedRequest, signature: BatchSignature): OutputTensor[] | InferenceError {
  if ("error" in response) return new InferenceError(response.error.code, response.error.message);
  try {
    return requestOutputs(response.outputs, request, signature);
  } catch (error) {
    return asInferenceError(error);
  }
}

/** The statistics of one execution. */
export function executionTimings(outcome: ExecutionOutcome, batchSize: number, requestCount: number): ExecutionTimings {
  const computeInputNs = Number(outcome.assembledNs - outcome.startNs) + outcome.backend.computeInputNs;
  const totalNs = Number(outcome.endNs - outcome.startNs);
  return {
    batchSize, requestCount, computeInputNs, computeInferNs: outcome.backend.computeInferNs,
    computeOutputNs: Math.max(0, totalNs - computeInputNs - outcome.backend.computeInferNs),
  };
}

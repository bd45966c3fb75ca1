import type { BackendInstance, BackendRequest, BackendResponder, BackendResponse, ExecutionResult, ModelCaller } from "../../backends/backend";
import { assembleBatch, type BatchSignature, requestOutputs, splitBatch } from "./batch-tensors";
import { asInferenceError, InferenceError } from "../errors";
import type { CallLink, CancellationSignal, InferenceTrace, OutputTensor, ParameterValue } from "../request/inference-request";
import type { CallOrigin } from "./model-calls";
import type { ExecutionTimings } from "../repository/model-statistics";
import type { ValidatedRequest } from "../request/request-validation";
import { userParameters } from "../request/reserved-parameters";
import type { ResponseSink } from "./request-scheduler";

/** One request of an execution, as the backend gets it. */
export interface ExecutionItem {
  readonly request: ValidatedRequest;
  readonly parameters: Readonly<Record<string, ParameterValue>>;
  /** Where a decoupled model's responses go; undefined for a model answering once. */
  readonly sink?: ResponseSink | undefined;
  /** What a call the model makes to another model (BLS) inherits from this request. */
  readonly signal?: CancellationSignal | undefined;
  readonly trace?: InferenceTrace | undefined;
  readonly chain?: readonly CallLink[] | undefined;
}

/** One execution's result per request, and its timings as the scheduler reports them. */
export interface ExecutionOutcome {
  readonly assembledNs: bigint;
  /** When the outputs were ready to hand out. */
  readonly endNs: bigint;
  readonly backend: Pick<ExecutionResult, "computeInputNs" | "computeInferNs">;
  /** Per item, in order: its outputs, the error it fails with, or undefined: a decoupled request's responses went to its sink. */
  readonly results: readonly (OutputTensor[] | InferenceError | undefined)[];
}

/**
 * Runs the items as one execution on `instance`: concatenated into one batch and cut back per request, or, for a
 * backend that takes the batch request by request, each request with its own outputs or error (or, decoupled, its
 * responses sent to its sink while the execution runs). Rejects when the execution as a whole fails.
 */
export async function executeItems(
  instance: BackendInstance, items: readonly ExecutionItem[], signature: BatchSignature, outputNames: readonly string[],
  callerFor?: (origin: CallOrigin) => ModelCaller,
): Promise<ExecutionOutcome> {
  const decoupled = items[0]!.sink !== undefined;
  if (decoupled && instance.executeRequests === undefined) {
    throw new InferenceError("UNSUPPORTED", "this model's backend cannot serve a decoupled model (model_transaction_policy { decoupled: true }): only the typescript backend can");
  }
  if (instance.executeRequests === undefined) {
    const requests = items.map((item) => item.request);
    const inputs = await assembleBatch(requests, signature);
    const assembledNs = process.hrtime.bigint();
    const result = await instance.execute(inputs, outputNames);
    return { assembledNs, endNs: process.hrtime.bigint(), backend: result, results: splitBatch(result.outputs, requests, signature) };
  }
  const requests: BackendRequest[] = [];
  for (const item of items) requests.push(await backendRequest(item, signature, instance, callerFor));
  const assembledNs = process.hrtime.bigint();
  const result = await instance.executeRequests(requests);
  // Decoupled: the responses went to the sinks; the execution returning frees the instance and nothing more.
  if (decoupled) return { assembledNs, endNs: process.hrtime.bigint(), backend: result, results: items.map(() => undefined) };
  if (result.responses.length !== items.length) {
    throw new InferenceError("INTERNAL", `the model answered ${result.responses.length} responses to a batch of ${items.length} requests`);
  }
  const results = items.map((item, i) => outputsOf(result.responses[i]!, item.request, signature));
  return { assembledNs, endNs: process.hrtime.bigint(), backend: result, results };
}

/** One item as its own request to the backend. */
async function backendRequest(
  item: ExecutionItem, signature: BatchSignature, instance: BackendInstance, callerFor?: (origin: CallOrigin) => ModelCaller,
): Promise<BackendRequest> {
  return {
    inputs: await assembleBatch([item.request], signature), parameters: userParameters(item.parameters),
    requestedOutputs: item.request.outputs.map((output) => output.name),
    responder: item.sink === undefined ? undefined : responderFor(item.request, item.sink, signature),
    caller: callerFor?.({ holder: instance, chain: item.chain, signal: item.signal, trace: item.trace }),
  };
}

/** One execution of {@link executeEachItem}: when it began, and its outcome or the error that fails its request. */
export interface EachOutcome {
  readonly startNs: bigint;
  readonly outcome: ExecutionOutcome | InferenceError;
}

/**
 * Runs each item as an execution of its own on `instance`, all handed over at once ({@link BackendInstance.executeEach},
 * which the caller checked is present). The first execution is timed from now (it includes handing the group
 * over), the last until its answer is back here, those between by the backend's own clock. Rejects when the
 * instance failed as a whole.
 */
export async function executeEachItem(
  instance: BackendInstance, items: readonly ExecutionItem[], signature: BatchSignature, callerFor?: (origin: CallOrigin) => ModelCaller,
): Promise<EachOutcome[]> {
  const groupStartNs = process.hrtime.bigint();
  const executions: BackendRequest[][] = [];
  for (const item of items) executions.push([await backendRequest(item, signature, instance, callerFor)]);
  const assembledNs = process.hrtime.bigint();
  const results = await instance.executeEach!(executions);
  const groupEndNs = process.hrtime.bigint();
  if (results.length !== items.length) throw new InferenceError("INTERNAL", `the backend answered ${results.length} executions of ${items.length}`);
  return results.map(({ startNs: backendStartNs, endNs: backendEndNs, result }, i): EachOutcome => {
    const startNs = i === 0 ? groupStartNs : backendStartNs;
    if (result instanceof Error) return { startNs, outcome: asInferenceError(result) };
    const response = result.responses[0];
    if (result.responses.length !== 1 || response === undefined) {
      return { startNs, outcome: new InferenceError("INTERNAL", `the model answered ${result.responses.length} responses to an execution of 1 request`) };
    }
    const endNs = i === results.length - 1 ? groupEndNs : backendEndNs;
    const item = items[i]!;
    const outputs = item.sink === undefined ? outputsOf(response, item.request, signature) : undefined;
    return { startNs, outcome: { assembledNs: i === 0 ? assembledNs : startNs, endNs, backend: result, results: [outputs] } };
  });
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

/** A decoupled request's responses, from the backend's form to the sink's. */
function responderFor(request: ValidatedRequest, sink: ResponseSink, signature: BatchSignature): BackendResponder {
  return {
    send: (response, final) => sink.send(response === undefined ? undefined : outputsOf(response, request, signature), final),
    get cancelled() {
      return sink.cancelled;
    },
    onCancel: (listener) => sink.onCancel(listener),
    get ready() {
      return sink.ready;
    },
    onReady: (listener) => sink.onReady(listener),
  };
}

/** The statistics of one execution that began at `startNs`. */
export function executionTimings(startNs: bigint, outcome: ExecutionOutcome, batchSize: number, requestCount: number): ExecutionTimings {
  const computeInputNs = Number(outcome.assembledNs - startNs) + outcome.backend.computeInputNs;
  const totalNs = Number(outcome.endNs - startNs);
  return {
    batchSize, requestCount, computeInputNs, computeInferNs: outcome.backend.computeInferNs,
    computeOutputNs: Math.max(0, totalNs - computeInputNs - outcome.backend.computeInferNs),
  };
}

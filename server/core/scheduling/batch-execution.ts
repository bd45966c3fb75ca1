import type { BackendInstance, ExecutionResult } from "../../backends/backend";
import { assembleBatch, type BatchSignature, requestOutputs, splitBatch } from "./batch-tensors";
import { asInferenceError, InferenceError } from "../errors";
import type { InferenceTrace, OutputTensor, ParameterValue } from "../request/inference-request";
import type { ExecutionTimings } from "../repository/model-statistics";
import type { ValidatedRequest } from "../request/request-validation";
import { userParameters } from "../request/reserved-parameters";

/** One request of an execution, as the backend gets it. */
export interface ExecutionItem {
  readonly request: ValidatedRequest;
  readonly parameters: Readonly<Record<string, ParameterValue>>;
}

/** One execution's result per request, and its timings as the scheduler reports them. */
export interface ExecutionOutcome {
  readonly assembledNs: bigint;
  /** When the outputs were ready to hand out. */
  readonly endNs: bigint;
  readonly backend: Pick<ExecutionResult, "computeInputNs" | "computeInferNs">;
  /** Per item, in order: its outputs, or the error it fails with. */
  readonly results: readonly (OutputTensor[] | InferenceError)[];
}

/**
 * Runs the items as one execution on `instance`: concatenated into one batch and cut back per request, or, for a
 * backend that takes the batch request by request, each request with its own outputs or error. Rejects when the
 * execution as a whole fails.
 */
export async function executeItems(
  instance: BackendInstance, items: readonly ExecutionItem[], signature: BatchSignature, outputNames: readonly string[],
): Promise<ExecutionOutcome> {
  if (instance.executeRequests === undefined) {
    const requests = items.map((item) => item.request);
    const inputs = assembleBatch(requests, signature);
    const assembledNs = process.hrtime.bigint();
    const result = await instance.execute(inputs, outputNames);
    return { assembledNs, endNs: process.hrtime.bigint(), backend: result, results: splitBatch(result.outputs, requests, signature) };
  }
  const requests = items.map((item) => ({
    inputs: assembleBatch([item.request], signature), parameters: userParameters(item.parameters),
    requestedOutputs: item.request.outputs.map((output) => output.name),
  }));
  const assembledNs = process.hrtime.bigint();
  const result = await instance.executeRequests(requests);
  if (result.responses.length !== items.length) {
    throw new InferenceError("INTERNAL", `the model answered ${result.responses.length} responses to a batch of ${items.length} requests`);
  }
  const results = items.map((item, i) => {
    const response = result.responses[i]!;
    if ("error" in response) return new InferenceError(response.error.code, response.error.message);
    try {
      return requestOutputs(response.outputs, item.request, signature);
    } catch (error) {
      return asInferenceError(error);
    }
  });
  return { assembledNs, endNs: process.hrtime.bigint(), backend: result, results };
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

/**
 * Triton's COMPUTE_* timestamps of one execution. The backend measures its input and infer phases as durations
 * on its own thread; placed after the batch was assembled, and never past the end the scheduler saw.
 */
export function traceCompute(trace: InferenceTrace, startNs: bigint, outcome: ExecutionOutcome): void {
  const { assembledNs, endNs, backend } = outcome;
  const inputEndNs = assembledNs + BigInt(Math.round(backend.computeInputNs));
  const clamp = (ns: bigint): bigint => (ns < endNs ? ns : endNs);
  trace.timestamp("COMPUTE_START", startNs);
  trace.timestamp("COMPUTE_INPUT_END", clamp(inputEndNs));
  trace.timestamp("COMPUTE_OUTPUT_START", clamp(inputEndNs + BigInt(Math.round(backend.computeInferNs))));
  trace.timestamp("COMPUTE_END", endNs);
}

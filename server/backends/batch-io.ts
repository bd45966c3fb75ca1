/**
 * Batching as a helper backends use (Triton's backend_input_collector.h and output responder): gather the inputs of
 * an execution's requests into one batch, scatter the batch's outputs back to them, or answer them all with an error.
 */
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { copyBytes } from "../../common/copy-bytes";
import type { BackendDataType, BackendExecution, BackendTensor, ExecutionTimes, TensorMap } from "./backend";
import { type DataType, ELEMENT_BYTE_SIZE } from "../../protocol/datatypes";
import type { ErrorCode } from "../../protocol/error-codes";
import { bytesElementOffsets } from "../../protocol/tensor-bytes";

/**
 * Bytes copied between turns of the event loop: one 64 MiB input's copy takes tens of milliseconds (hundreds on a
 * busy machine), which every other request and health check would wait for.
 */
export const COPY_SLICE_BYTES = 4 * 1024 * 1024;

/** Copies `source` into `target` at `offset`, letting the event loop run between slices of a large one. */
export async function copyInSlices(target: Uint8Array, source: Uint8Array, offset: number): Promise<void> {
  for (let start = 0; start < source.byteLength; start += COPY_SLICE_BYTES) {
    if (start > 0) await yieldToEventLoop();
    copyBytes(target, source.subarray(start, start + COPY_SLICE_BYTES), offset + start);
  }
}

/** Memory for `byteLength` bytes of a batch, in a buffer the backend owns. */
export type BatchAllocator = (byteLength: number) => Uint8Array<ArrayBuffer>;

const freshBuffer: BatchAllocator = (byteLength) => new Uint8Array(new ArrayBuffer(byteLength));

/** One input of a batch before it is gathered: each request's part, in request order (views of the core's buffers). */
export interface BatchParts {
  readonly datatype: BackendDataType;
  /** The batch's shape: the first request's, with the batch dimension summed when there are several. */
  readonly shape: readonly number[];
  readonly parts: readonly Uint8Array[];
}

/**
 * Each input of the execution with its requests' parts. An optional input the first request omits is left out
 * (requests without it never batch with those that have it).
 */
export function batchParts(requests: BackendExecution): Map<string, BatchParts> {
  const batch = new Map<string, BatchParts>();
  const batchSize = requests.reduce((sum, request) => sum + request.batchSize, 0);
  for (const [name, first] of requests[0]?.inputs ?? []) {
    const parts: Uint8Array[] = [];
    for (const request of requests) {
      const part = request.inputs.get(name);
      if (part !== undefined) parts.push(part.data);
    }
    batch.set(name, { datatype: first.datatype, shape: requests.length === 1 ? first.shape : [batchSize, ...first.shape.slice(1)], parts });
  }
  return batch;
}

/** `parts` concatenated into memory from `allocate`, a large part in slices between turns of the event loop. */
export async function concatenateParts(parts: readonly Uint8Array[], allocate: BatchAllocator = freshBuffer): Promise<Uint8Array<ArrayBuffer>> {
  const data = allocate(parts.reduce((sum, part) => sum + part.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    // A small part in one go: no promise to wait for (the common case, paid by every request).
    if (part.byteLength <= COPY_SLICE_BYTES) copyBytes(data, part, offset);
    else await copyInSlices(data, part, offset);
    offset += part.byteLength;
  }
  return data;
}

/**
 * The requests' inputs concatenated along the batch dimension, in buffers the backend owns (and may move to its
 * thread): fresh ones, or from `allocate` (each input at the start of a buffer of its own). With one request this is
 * the single copy that makes its bytes aligned and transferable.
 */
export async function gatherInputs(requests: BackendExecution, allocate: BatchAllocator = freshBuffer): Promise<TensorMap> {
  const batch: TensorMap = new Map();
  for (const [name, { datatype, shape, parts }] of batchParts(requests)) {
    batch.set(name, { datatype, shape, data: await concatenateParts(parts, allocate) });
  }
  return batch;
}

/** Every output some request of the execution asked for, once each. */
export function requestedOutputNames(requests: BackendExecution): readonly string[] {
  if (requests.length === 1) return requests[0]!.requestedOutputs;
  return [...new Set(requests.flatMap((request) => request.requestedOutputs))];
}

/**
 * Cuts a batch's outputs back by each request's batch size (BYTES by element offsets) and sends each request its
 * share as its final response. The core checks each response against the config.
 */
export function scatterOutputs(outputs: TensorMap, requests: BackendExecution): void {
  if (requests.length === 1) return requests[0]!.responder.send({ outputs }, true);
  const perRequest: TensorMap[] = requests.map(() => new Map());
  for (const [name, tensor] of outputs) {
    const cuts = batchCuts(tensor, requests);
    requests.forEach((request, i) => {
      perRequest[i]!.set(name, { datatype: tensor.datatype, shape: [request.batchSize, ...tensor.shape.slice(1)], data: tensor.data.subarray(cuts[i]!, cuts[i + 1]!) });
    });
  }
  requests.forEach((request, i) => request.responder.send({ outputs: perRequest[i]! }, true));
}

/** Byte offsets where each request's share of a batched tensor starts, then where the last one ends. */
function batchCuts(tensor: BackendTensor, requests: BackendExecution): number[] {
  const totalBatch = tensor.shape[0] ?? 0;
  const itemElements = totalBatch > 0 ? tensor.shape.reduce((product, dim) => product * dim, 1) / totalBatch : 0;
  const elementSize = ELEMENT_BYTE_SIZE[tensor.datatype as DataType];
  const offsets = elementSize === 0 ? bytesElementOffsets(tensor.data) : undefined;
  const cuts = [0];
  let element = 0;
  for (const request of requests) {
    element += itemElements * request.batchSize;
    cuts.push(offsets !== undefined ? offsets[element] ?? tensor.data.byteLength : element * elementSize);
  }
  return cuts;
}

/** Answers each request of an execution that failed as a whole with `error` (one already answered drops it); undefined, as execute() reports such an execution. */
export function failExecution(requests: BackendExecution, error: { readonly code: ErrorCode; readonly message: string }): undefined {
  for (const request of requests) request.responder.send({ error }, true);
  return undefined;
}

/** One batch's run as a backend measures it. */
export interface BatchRun {
  readonly outputs: TensorMap;
  readonly computeInputNs: number;
  readonly computeInferNs: number;
  readonly computeOutputNs: number;
}

/**
 * Runs each execution as one batch, in order, for a backend whose model takes whole batches: gathers its requests'
 * inputs with `gather` ({@link gatherInputs}, or a form another thread gathers), hands them to `run` with the
 * outputs they ask for, and scatters the outputs back. `run` throwing fails the execution with its message (INTERNAL).
 */
export async function executeBatches<Inputs>(
  executions: readonly BackendExecution[], gather: (requests: BackendExecution) => Promise<Inputs>,
  run: (inputs: Inputs, outputNames: readonly string[]) => Promise<BatchRun>,
): Promise<(ExecutionTimes | undefined)[]> {
  const times: (ExecutionTimes | undefined)[] = [];
  for (const requests of executions) {
    const startNs = process.hrtime.bigint();
    try {
      const inputs = await gather(requests);
      const gatheredNs = process.hrtime.bigint();
      const result = await run(inputs, requestedOutputNames(requests));
      scatterOutputs(result.outputs, requests);
      times.push({
        startNs, endNs: process.hrtime.bigint(), computeInputNs: Number(gatheredNs - startNs) + result.computeInputNs,
        computeInferNs: result.computeInferNs, computeOutputNs: result.computeOutputNs,
      });
    } catch (error) {
      times.push(failExecution(requests, { code: "INTERNAL", message: error instanceof Error ? error.message : String(error) }));
    }
  }
  return times;
}

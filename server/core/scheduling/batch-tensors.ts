import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { BackendTensor, TensorMap } from "../../backends/backend";
import { bytesElementOffsets } from "../../../protocol/tensor-bytes";
import { type DataType, ELEMENT_BYTE_SIZE } from "../../../protocol/datatypes";
import { InferenceError } from "../errors";
import type { OutputTensor } from "../request/inference-request";
import type { ModelSignature, TensorSignature } from "../model-config/model-signature";
import type { ValidatedRequest } from "../request/request-validation";
import { elementCount } from "../request/tensor";
import { reshapeBatchedShape, reshapeShape } from "./reshape-shape";

/** A model signature as batching reads it, built once per model version instead of once per request. */
export interface BatchSignature {
  readonly maxBatchSize: number;
  /** Every tensor a batch carries to the backend: the inputs, then the sequence controls (never reshaped). */
  readonly inputs: readonly Pick<TensorSignature, "name" | "datatype" | "dims" | "reshape">[];
  readonly outputs: readonly TensorSignature[];
  readonly outputsByName: ReadonlyMap<string, TensorSignature>;
}

export function batchSignature(signature: ModelSignature): BatchSignature {
  return {
    maxBatchSize: signature.maxBatchSize,
    inputs: [...signature.inputs, ...signature.controls.map((c) => ({ ...c, dims: [], reshape: undefined }))],
    outputs: signature.outputs,
    outputsByName: new Map(signature.outputs.map((output) => [output.name, output])),
  };
}

/**
 * Bytes copied between turns of the event loop: one 64 MiB input's copy takes tens of milliseconds (hundreds on a
 * busy machine), which every other request and health check would wait for.
 */
export const COPY_SLICE_BYTES = 4 * 1024 * 1024;

/** Copies `source` into `target` at `offset`, letting the event loop run between slices of a large one. */
export async function copyInSlices(target: Uint8Array, source: Uint8Array, offset: number): Promise<void> {
  for (let start = 0; start < source.byteLength; start += COPY_SLICE_BYTES) {
    if (start > 0) await yieldToEventLoop();
    target.set(source.subarray(start, start + COPY_SLICE_BYTES), offset + start);
  }
}

/**
 * Concatenates the requests' inputs along the batch dimension into fresh buffers the backend may own (and move
 * to its thread). With one request this is the single copy that makes the bytes aligned and transferable.
 */
export async function assembleBatch(requests: readonly ValidatedRequest[], signature: BatchSignature): Promise<TensorMap> {
  const batch: TensorMap = new Map();
  const totalBatch = requests.reduce((sum, r) => sum + r.batchSize, 0);
  for (const spec of signature.inputs) {
    const parts = requests.map((r) => r.inputs.get(spec.name));
    const first = parts[0];
    if (first === undefined) continue; // optional input omitted (requests without it never batch with those that have it)
    let byteLength = 0;
    for (const part of parts) byteLength += part?.data.byteLength ?? 0;
    const data = new Uint8Array(new ArrayBuffer(byteLength));
    let offset = 0;
    for (const part of parts) {
      if (part === undefined) continue;
      await copyInSlices(data, part.data, offset);
      offset += part.data.byteLength;
    }
    const itemShape = signature.maxBatchSize > 0 ? first.shape.slice(1) : first.shape;
    const backendItemShape = spec.reshape !== undefined ? reshapeShape(spec.dims, itemShape, spec.reshape) : itemShape;
    const shape = signature.maxBatchSize > 0 ? [totalBatch, ...backendItemShape] : [...backendItemShape];
    batch.set(spec.name, { datatype: spec.datatype, shape, data });
  }
  return batch;
}

function outputShape(maxBatchSize: number, spec: TensorSignature, backendShape: readonly number[], batchSize: number): number[] {
  const rest = maxBatchSize > 0 ? backendShape.slice(1) : [...backendShape];
  // With a config reshape, clients see the config dims, not the backend's.
  const itemShape = spec.reshape !== undefined ? reshapeShape(spec.reshape, rest, spec.dims) : rest;
  return maxBatchSize > 0 ? [batchSize, ...itemShape] : itemShape;
}

/** Cuts the batched outputs back into one output set per request, in request order. */
export function splitBatch(
  outputs: TensorMap, requests: readonly ValidatedRequest[], signature: BatchSignature,
): OutputTensor[][] {
  const perRequest: OutputTensor[][] = requests.map(() => []);
  for (const spec of signature.outputs) {
    const tensor: BackendTensor | undefined = outputs.get(spec.name);
    if (tensor === undefined) throw new InferenceError("INTERNAL", `model produced no output '${spec.name}'`);
    const datatype = tensor.datatype as DataType;
    if (requests.length === 1) {
      perRequest[0]!.push({ name: spec.name, datatype, shape: outputShape(signature.maxBatchSize, spec, tensor.shape, requests[0]!.batchSize), data: tensor.data });
      continue;
    }
    const totalBatch = tensor.shape[0] ?? 0;
    const itemElements = totalBatch > 0 ? elementCount(tensor.shape) / totalBatch : 0;
    const elementSize = ELEMENT_BYTE_SIZE[datatype];
    const offsets = elementSize === 0 ? bytesElementOffsets(tensor.data) : undefined;
    let element = 0;
    requests.forEach((request, i) => {
      const elements = itemElements * request.batchSize;
      const start = offsets ? offsets[element]! : element * elementSize;
      const end = offsets ? offsets[element + elements]! : (element + elements) * elementSize;
      element += elements;
      perRequest[i]!.push({
        name: spec.name, datatype, shape: outputShape(signature.maxBatchSize, spec, tensor.shape, request.batchSize),
        data: tensor.data.subarray(start, end),
      });
    });
  }
  return perRequest;
}

/**
 * One request's outputs from a backend that answers request by request: every output the client asked for, each
 * checked against the config (datatype, batch dimension, bytes for the shape), so a model's mistake fails its
 * request with a reason instead of reaching the client as a malformed tensor.
 */
export function requestOutputs(outputs: TensorMap, request: ValidatedRequest, signature: BatchSignature): OutputTensor[] {
  return request.outputs.map(({ name }) => {
    const tensor = outputs.get(name);
    if (tensor === undefined) throw new InferenceError("INTERNAL", `model produced no output '${name}'`);
    const spec = signature.outputsByName.get(name)!;
    const fail = (detail: string): never => {
      throw new InferenceError("INTERNAL", `model returned output '${name}' ${detail}`);
    };
    if (tensor.datatype !== spec.datatype) fail(`as ${tensor.datatype}, but the model config declares ${spec.datatype}`);
    if (!tensor.shape.every((dim) => Number.isSafeInteger(dim) && dim >= 0)) fail(`with an invalid shape [${tensor.shape.join(",")}]`);
    if (signature.maxBatchSize > 0 && tensor.shape[0] !== request.batchSize) {
      fail(`with shape [${tensor.shape.join(",")}], but the request's batch size is ${request.batchSize}`);
    }
    const count = elementCount(tensor.shape);
    const elementSize = ELEMENT_BYTE_SIZE[spec.datatype];
    const elements = elementSize === 0 ? bytesElementOffsets(tensor.data).length - 1 : tensor.data.byteLength / elementSize;
    if (elements !== count) fail(`with ${elements} elements, but its shape [${tensor.shape.join(",")}] needs ${count}`);
    const shape = spec.reshape !== undefined ? reshapeBatchedShape(signature.maxBatchSize > 0, spec.reshape, tensor.shape, spec.dims) : tensor.shape;
    return { name, datatype: spec.datatype, shape, data: tensor.data };
  });
}

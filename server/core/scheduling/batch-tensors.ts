import type { TensorMap } from "../../backends/backend";
import { bytesElementOffsets } from "../../../protocol/tensor-bytes";
import { ELEMENT_BYTE_SIZE } from "../../../protocol/datatypes";
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
  /** Whether some input has a config `reshape`. */
  readonly reshapesInputs: boolean;
  readonly outputs: readonly TensorSignature[];
  readonly outputsByName: ReadonlyMap<string, TensorSignature>;
}

export function batchSignature(signature: ModelSignature): BatchSignature {
  return {
    maxBatchSize: signature.maxBatchSize,
    inputs: [...signature.inputs, ...signature.controls.map((c) => ({ ...c, dims: [], reshape: undefined }))],
    reshapesInputs: signature.inputs.some((input) => input.reshape !== undefined),
    outputs: signature.outputs,
    outputsByName: new Map(signature.outputs.map((output) => [output.name, output])),
  };
}

/**
 * A request's inputs as its backend takes them: in config order, the config's `reshape` applied, the request's own
 * buffers (the backend copies what it keeps). Sequence controls and states come with them.
 */
export function backendInputs(request: ValidatedRequest, signature: BatchSignature): TensorMap {
  // Most requests are in that form already (validated, without a reshape, sent in config order): a map of their own
  // would cost every request of every execution.
  if (!signature.reshapesInputs && inConfigOrder(request.inputs, signature)) return request.inputs;
  const inputs: TensorMap = new Map();
  const batched = signature.maxBatchSize > 0;
  for (const spec of signature.inputs) {
    const tensor = request.inputs.get(spec.name);
    if (tensor === undefined) continue; // an optional input omitted
    const itemShape = batched ? tensor.shape.slice(1) : tensor.shape;
    const backendItemShape = spec.reshape !== undefined ? reshapeShape(spec.dims, itemShape, spec.reshape) : itemShape;
    inputs.set(spec.name, { datatype: spec.datatype, shape: batched ? [request.batchSize, ...backendItemShape] : backendItemShape, data: tensor.data });
  }
  return inputs;
}

/** Whether the inputs come in the config's order, optional ones omitted aside (a backend may match them by position). */
function inConfigOrder(inputs: ReadonlyMap<string, unknown>, signature: BatchSignature): boolean {
  let next = 0;
  for (const name of inputs.keys()) {
    while (next < signature.inputs.length && signature.inputs[next]!.name !== name) next++;
    if (next++ === signature.inputs.length) return false;
  }
  return true;
}

/**
 * One request's outputs as its backend answered them: every output the client asked for, each
 * checked against the config (datatype, batch dimension, bytes for the shape), so a model's mistake fails its
 * request with a reason instead of reaching the client as a malformed tensor.
 */
export function requestOutputs(outputs: TensorMap, request: ValidatedRequest, signature: BatchSignature): OutputTensor[] {
  return request.outputs.map(({ name }) => {
    const tensor = outputs.get(name);
    if (tensor === undefined) throw new InferenceError("INTERNAL", `model produced no output '${name}'`);
    const spec = signature.outputsByName.get(name)!;
    const { shape } = tensor;
    if (tensor.datatype !== spec.datatype) throw badOutput(name, `as ${tensor.datatype}, but the model config declares ${spec.datatype}`);
    for (const dim of shape) if (!Number.isSafeInteger(dim) || dim < 0) throw badOutput(name, `with an invalid shape [${shape.join(",")}]`);
    const batched = signature.maxBatchSize > 0;
    if (batched && shape[0] !== request.batchSize) {
      throw badOutput(name, `with shape [${shape.join(",")}], but the request's batch size is ${request.batchSize}`);
    }
    const count = elementCount(shape);
    const elementSize = ELEMENT_BYTE_SIZE[spec.datatype];
    const elements = elementSize === 0 ? bytesElementOffsets(tensor.data).length - 1 : tensor.data.byteLength / elementSize;
    if (elements !== count) throw badOutput(name, `with ${elements} elements, but its shape [${shape.join(",")}] needs ${count}`);
    if (spec.reshape === undefined) return { name, datatype: spec.datatype, shape, data: tensor.data };
    return { name, datatype: spec.datatype, shape: reshapeBatchedShape(batched, spec.reshape, shape, spec.dims), data: tensor.data };
  });
}

function badOutput(name: string, detail: string): InferenceError {
  return new InferenceError("INTERNAL", `model returned output '${name}' ${detail}`);
}

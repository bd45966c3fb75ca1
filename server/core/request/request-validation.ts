import { ELEMENT_BYTE_SIZE } from "../../../protocol/datatypes";
import { clipped, invalidArg } from "../errors";
import type { InferRequest, RequestedOutput } from "./inference-request";
import type { ModelSignature, TensorSignature } from "../model-config/model-signature";
import { checkBytesElements, elementCount, type Tensor } from "./tensor";

/** Bounds any single tensor, so absurd dims are refused before anything is sized from them. */
const MAX_ELEMENTS = 2 ** 31 - 1;

/**
 * Per-request bounds beyond the transport's body size. A BYTES element costs far more than its 4-byte prefix
 * once it becomes a string (and, in ONNX Runtime, a std::string): without a count bound a 64 MB body of 16 M empty
 * strings took gigabytes and over a minute.
 */
export interface RequestLimits {
  /** Most BYTES elements in one input tensor (`--max-bytes-elements`). */
  readonly maxBytesElements: number;
  /** Largest single BYTES element, bytes (`--max-bytes-element-size`). */
  readonly maxBytesElementSize: number;
}

export const DEFAULT_REQUEST_LIMITS: RequestLimits = { maxBytesElements: 1 << 20, maxBytesElementSize: 1 << 26 };

/** For inputs the operator wrote (warmup samples): the client limits do not apply. */
export const OPERATOR_INPUT_LIMITS: RequestLimits = { maxBytesElements: Number.POSITIVE_INFINITY, maxBytesElementSize: Number.POSITIVE_INFINITY };

/** A request that passed validation, ready for the scheduler. */
export interface ValidatedRequest {
  readonly batchSize: number;
  /** Non-batch dims of every input, so that only compatible requests share a batch. */
  readonly shapeKey: string;
  /** Client inputs, plus the control inputs the server adds for sequence models. */
  readonly inputs: Map<string, Tensor>;
  readonly outputs: readonly RequestedOutput[];
}

function formatShape(shape: readonly number[]): string {
  return `[${shape.join(",")}]`;
}

function checkShape(modelName: string, tensor: Tensor, expected: readonly number[], displayExpected: readonly number[]): void {
  const matches = tensor.shape.length === expected.length && expected.every((dim, i) => dim === -1 || dim === tensor.shape[i]);
  if (!matches) {
    throw invalidArg(
      `unexpected shape for input '${tensor.name}' for model '${modelName}'. Expected ${formatShape(displayExpected)}, got ${formatShape(tensor.shape)}`,
    );
  }
}

function checkData(modelName: string, tensor: Tensor, limits: RequestLimits): void {
  for (const dim of tensor.shape) {
    if (!Number.isSafeInteger(dim) || dim < 0) {
      throw invalidArg(`input '${tensor.name}' for model '${modelName}' has an invalid dimension ${dim} in shape ${formatShape(tensor.shape)}`);
    }
  }
  const count = elementCount(tensor.shape);
  if (count > MAX_ELEMENTS) {
    throw invalidArg(`input '${tensor.name}' shape ${formatShape(tensor.shape)} has ${count} elements, more than the ${MAX_ELEMENTS} allowed`);
  }
  const elementSize = ELEMENT_BYTE_SIZE[tensor.datatype];
  if (elementSize === 0) {
    if (count > limits.maxBytesElements) {
      throw invalidArg(
        `input '${tensor.name}' shape ${formatShape(tensor.shape)} has ${count} BYTES elements, more than the ${limits.maxBytesElements} allowed (--max-bytes-elements)`,
      );
    }
    checkBytesElements(tensor.data, count, tensor.name, limits.maxBytesElementSize);
  } else if (tensor.data.byteLength !== count * elementSize) {
    throw invalidArg(
      `input byte size mismatch for input '${tensor.name}' for model '${modelName}'. Expected ${count * elementSize}, got ${tensor.data.byteLength}`,
    );
  }
}

function validateInput(request: InferRequest, signature: ModelSignature, spec: TensorSignature, tensor: Tensor, limits: RequestLimits): number {
  const model = request.modelName;
  if (tensor.datatype !== spec.datatype) {
    throw invalidArg(`inference input '${tensor.name}' data-type is '${tensor.datatype}', but model '${model}' expects '${spec.datatype}'`);
  }
  checkData(model, tensor, limits);
  const problem = signature.inputProblem?.(tensor);
  if (problem !== undefined) throw invalidArg(`input '${tensor.name}' element ${problem.element} of model '${model}' ${problem.reason}`);
  if (signature.maxBatchSize === 0) {
    checkShape(model, tensor, spec.dims, spec.dims);
    return 1;
  }
  checkShape(model, tensor, [-1, ...spec.dims], [-1, ...spec.dims]);
  const batchSize = tensor.shape[0]!;
  if (batchSize < 1) {
    throw invalidArg(`input '${tensor.name}' for model '${model}' needs a batch dimension of at least 1, got shape ${formatShape(tensor.shape)}`);
  }
  if (batchSize > signature.maxBatchSize) {
    throw invalidArg(`inference request batch-size must be <= ${signature.maxBatchSize} for '${model}'`);
  }
  return batchSize;
}

function validateOutputs(request: InferRequest, signature: ModelSignature): RequestedOutput[] {
  if (request.outputs === undefined || request.outputs.length === 0) return signature.outputs.map((o) => ({ name: o.name }));
  const seen = new Set<string>();
  for (const output of request.outputs) {
    if (!signature.outputs.some((o) => o.name === output.name)) {
      throw invalidArg(`unexpected inference output '${clipped(output.name)}' for model '${request.modelName}'`);
    }
    if (seen.has(output.name)) throw invalidArg(`output '${output.name}' is requested more than once`);
    seen.add(output.name);
    if (output.classification !== undefined && (!Number.isInteger(output.classification) || output.classification <= 0)) {
      throw invalidArg(`classification count for output '${output.name}' must be a positive integer, got ${output.classification}`);
    }
  }
  return [...request.outputs];
}

/** Checks a request against the model's signature; every failure is an INVALID_ARG the client can act on. */
export function validateRequest(request: InferRequest, signature: ModelSignature, limits: RequestLimits): ValidatedRequest {
  const byName = new Map<string, Tensor>();
  for (const tensor of request.inputs) {
    if (byName.has(tensor.name)) throw invalidArg(`input '${clipped(tensor.name)}' is given more than once`);
    if (!signature.inputs.some((spec) => spec.name === tensor.name)) {
      const allowed = signature.inputs.map((spec) => `'${spec.name}'`).join(", ");
      throw invalidArg(`unexpected inference input '${clipped(tensor.name)}' for model '${request.modelName}', allowed inputs are: ${allowed}`);
    }
    byName.set(tensor.name, tensor);
  }
  const missing = signature.inputs.filter((spec) => !spec.optional && !byName.has(spec.name)).map((spec) => `'${spec.name}'`);
  if (missing.length > 0) {
    throw invalidArg(
      `expected ${signature.inputs.length} inputs but got ${request.inputs.length} inputs for model '${request.modelName}'. ` +
      `Missing required input(s) ${missing.join(", ")}. Please provide all required input(s).`,
    );
  }

  let batchSize: number | undefined;
  const shapeKeys: string[] = [];
  for (const spec of signature.inputs) {
    const tensor = byName.get(spec.name);
    if (tensor === undefined) continue;
    const tensorBatch = validateInput(request, signature, spec, tensor, limits);
    if (batchSize !== undefined && tensorBatch !== batchSize) {
      throw invalidArg(`inputs of one request must share the batch size: '${spec.name}' has ${tensorBatch}, an earlier input has ${batchSize}`);
    }
    batchSize = tensorBatch;
    shapeKeys.push(`${spec.name}:${(signature.maxBatchSize > 0 ? tensor.shape.slice(1) : tensor.shape).join("x")}`);
  }
  return { batchSize: batchSize ?? 1, shapeKey: shapeKeys.join(";"), inputs: byName, outputs: validateOutputs(request, signature) };
}

import { ELEMENT_BYTE_SIZE } from "../../../protocol/datatypes";
import { clipped, invalidArg, requestLogPrefix } from "../errors";
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

/** Triton's words after a wrong shape for a batching model (core src/infer_request.cc, Normalize). */
const IMPLICIT_BATCH_NOTE =
  "NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended to each input shape. " +
  "If you want to specify the full shape including the batch dim in your input dims config, try setting max_batch_size to zero. " +
  "See the model configuration docs for more info on max_batch_size.";

/** What every check of one request quotes: its model, and Triton's `[request id: ...] ` prefix. */
interface RequestContext {
  readonly model: string;
  readonly log: string;
}

function checkShape(context: RequestContext, tensor: Tensor, expected: readonly number[], batching: boolean): void {
  const matches = tensor.shape.length === expected.length && expected.every((dim, i) => dim === -1 || dim === tensor.shape[i]);
  if (!matches) {
    // Triton's text ends in ". " and its note, which is empty for a model that does not batch.
    throw invalidArg(
      `${context.log}unexpected shape for input '${tensor.name}' for model '${context.model}'. Expected ${formatShape(expected)}, ` +
      `got ${formatShape(tensor.shape)}. ${batching ? IMPLICIT_BATCH_NOTE : ""}`,
    );
  }
}

function checkData(context: RequestContext, tensor: Tensor, limits: RequestLimits): void {
  const { model, log } = context;
  for (const dim of tensor.shape) {
    if (!Number.isSafeInteger(dim) || dim < 0) {
      throw invalidArg(`${log}input '${tensor.name}' for model '${model}' has an invalid dimension ${dim} in shape ${formatShape(tensor.shape)}`);
    }
  }
  const count = elementCount(tensor.shape);
  if (count > MAX_ELEMENTS) {
    throw invalidArg(`${log}input '${tensor.name}' shape ${formatShape(tensor.shape)} has ${count} elements, more than the ${MAX_ELEMENTS} allowed`);
  }
  const elementSize = ELEMENT_BYTE_SIZE[tensor.datatype];
  if (elementSize === 0) {
    if (count > limits.maxBytesElements) {
      throw invalidArg(
        `${log}input '${tensor.name}' shape ${formatShape(tensor.shape)} has ${count} BYTES elements, more than the ${limits.maxBytesElements} allowed (--max-bytes-elements)`,
      );
    }
    checkBytesElements(tensor.data, count, tensor.name, limits.maxBytesElementSize);
  } else if (tensor.data.byteLength !== count * elementSize) {
    throw invalidArg(
      `${log}input byte size mismatch for input '${tensor.name}' for model '${model}'. Expected ${count * elementSize}, got ${tensor.data.byteLength}`,
    );
  }
}

function validateInput(context: RequestContext, signature: ModelSignature, spec: TensorSignature, tensor: Tensor, limits: RequestLimits): number {
  const { model, log } = context;
  if (tensor.datatype !== spec.datatype) {
    throw invalidArg(`${log}inference input '${tensor.name}' data-type is '${tensor.datatype}', but model '${model}' expects '${spec.datatype}'`);
  }
  checkData(context, tensor, limits);
  const problem = signature.inputProblem?.(tensor);
  if (problem !== undefined) throw invalidArg(`${log}input '${tensor.name}' element ${problem.element} of model '${model}' ${problem.reason}`);
  if (signature.maxBatchSize === 0) {
    checkShape(context, tensor, spec.dims, false);
    return 1;
  }
  checkShape(context, tensor, [-1, ...spec.dims], true);
  const batchSize = tensor.shape[0]!;
  if (batchSize < 1) {
    throw invalidArg(`${log}input '${tensor.name}' for model '${model}' needs a batch dimension of at least 1, got shape ${formatShape(tensor.shape)}`);
  }
  if (batchSize > signature.maxBatchSize) {
    throw invalidArg(`${log}inference request batch-size must be <= ${signature.maxBatchSize} for '${model}'`);
  }
  return batchSize;
}

function validateOutputs(context: RequestContext, request: InferRequest, signature: ModelSignature): RequestedOutput[] {
  if (request.outputs === undefined || request.outputs.length === 0) return signature.outputs.map((o) => ({ name: o.name }));
  const seen = new Set<string>();
  // Triton refuses a second output of one name as the request is built, before it looks at the model.
  for (const output of request.outputs) {
    if (seen.has(output.name)) throw invalidArg(`${context.log}output '${clipped(output.name)}' already exists in request`);
    seen.add(output.name);
  }
  for (const output of request.outputs) {
    if (!signature.outputs.some((o) => o.name === output.name)) {
      throw invalidArg(`unexpected inference output '${clipped(output.name)}' for model '${context.model}'`);
    }
    if (output.classification !== undefined && (!Number.isInteger(output.classification) || output.classification <= 0)) {
      throw invalidArg(`classification count for output '${output.name}' must be a positive integer, got ${output.classification}`);
    }
  }
  return [...request.outputs];
}

function requiredCount(signature: ModelSignature): number {
  return signature.inputs.filter((spec) => !spec.optional).length;
}

/** Triton's ValidateRequestInputs (core src/infer_request.cc): the inputs given, and the required ones missing. */
function missingInputs(context: RequestContext, request: InferRequest, signature: ModelSignature, missing: readonly string[]): Error {
  const list = (names: readonly string[]): string => `[${names.map((name) => `'${clipped(name)}'`).join(",")}]`;
  const total = signature.inputs.length;
  const required = requiredCount(signature);
  const expected = required === total ? `expected ${total} inputs` : `expected number of inputs between ${required} and ${total}`;
  return invalidArg(
    `${context.log}${expected} but got ${request.inputs.length} inputs for model '${context.model}'. ` +
    `Got input(s) ${list(request.inputs.map((t) => t.name))}, but missing required input(s) ${list(missing)}. Please provide all required input(s).`,
  );
}

/**
 * Checks a request against the model's signature; every failure is an INVALID_ARG the client can act on, in
 * Triton's order: a repeated input or output, an unknown output, too few inputs, an unknown input, then each
 * input's datatype, data and shape.
 */
export function validateRequest(request: InferRequest, signature: ModelSignature, limits: RequestLimits): ValidatedRequest {
  const context: RequestContext = { model: request.modelName, log: requestLogPrefix(request.id) };
  const byName = new Map<string, Tensor>();
  for (const tensor of request.inputs) {
    if (byName.has(tensor.name)) throw invalidArg(`${context.log}input '${clipped(tensor.name)}' already exists in request`);
    byName.set(tensor.name, tensor);
  }
  const outputs = validateOutputs(context, request, signature);
  const missing = signature.inputs.filter((spec) => !spec.optional && !byName.has(spec.name)).map((spec) => spec.name);
  // Triton counts before it names: fewer inputs than required is the missing-input error, whatever they are.
  if (request.inputs.length < requiredCount(signature)) throw missingInputs(context, request, signature, missing);
  for (const tensor of request.inputs) {
    if (!signature.inputs.some((spec) => spec.name === tensor.name)) {
      const allowed = signature.inputs.map((spec) => `'${spec.name}'`).join(", ");
      throw invalidArg(`unexpected inference input '${clipped(tensor.name)}' for model '${context.model}', allowed inputs are: ${allowed}`);
    }
  }
  if (missing.length > 0) throw missingInputs(context, request, signature, missing);

  let batchSize: number | undefined;
  const shapeKeys: string[] = [];
  for (const spec of signature.inputs) {
    const tensor = byName.get(spec.name);
    if (tensor === undefined) continue;
    const tensorBatch = validateInput(context, signature, spec, tensor, limits);
    if (batchSize !== undefined && tensorBatch !== batchSize) {
      throw invalidArg(`${context.log}input '${spec.name}' batch size does not match other inputs for '${context.model}'`);
    }
    batchSize = tensorBatch;
    shapeKeys.push(`${spec.name}:${(signature.maxBatchSize > 0 ? tensor.shape.slice(1) : tensor.shape).join("x")}`);
  }
  return { batchSize: batchSize ?? 1, shapeKey: shapeKeys.join(";"), inputs: byName, outputs };
}

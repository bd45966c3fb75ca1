import {
  clipped, type DataType, elementCount, type InferenceError, type InferResponse, type InferRequest, invalidArg, type ModelMetadata, type ParameterValue, type Tensor,
} from "../../core/index";
import { encodeJsonData, jsonDataText } from "./json-tensor-data";

/** The generate request's key whose object holds parameters (Triton's nested request schema). */
const PARAMETERS_KEY = "parameters";

function parameterOf(key: string, value: unknown): ParameterValue {
  if (typeof value === "string" || typeof value === "boolean" || typeof value === "bigint") return value;
  if (typeof value === "number" && Number.isFinite(value)) return value;
  throw invalidArg(`parameter '${clipped(key)}' must be a string, a number or a boolean`);
}

/**
 * Triton's generate shape rule (GenerateRequestClass::ExactMappingInput): a value is one element or a flat array;
 * its count is spread over the input's fixed dimensions from the innermost out, the innermost variable dimension
 * takes what is left and the other variable ones (the batch dimension among them) are 1.
 */
function generateShape(name: string, declared: readonly number[], count: number): number[] {
  const shape = [...declared];
  const cannot = (): InferenceError => invalidArg(`The schema can not convert input '${clipped(name)}' to tensor with proper shape`);
  let left = count;
  for (let i = shape.length - 1; i >= 0; i--) {
    const dim = shape[i]!;
    if (dim === -1) continue;
    if (dim === 0 || left % dim !== 0) throw cannot();
    left /= dim;
  }
  for (let i = shape.length - 1; i >= 0; i--) {
    if (shape[i] === -1) {
      shape[i] = left;
      left = 1;
    }
  }
  if (left !== 1) throw cannot();
  return shape;
}

/**
 * A generate request body as an inference request, mapped as Triton maps it: a top-level key that names one of
 * the model's inputs is that tensor (one element or a flat array, with the input's datatype), `parameters` is an
 * object of parameters, and every other key is a parameter too.
 */
export function generateRequest(body: Record<string, unknown>, metadata: ModelMetadata, modelVersion: string | undefined): InferRequest {
  const inputs = new Map(metadata.inputs.map((input) => [input.name, input]));
  const tensors: Tensor[] = [];
  const parameters: Record<string, ParameterValue> = {};
  for (const [key, value] of Object.entries(body)) {
    const input = inputs.get(key);
    if (input !== undefined) {
      const values = Array.isArray(value) ? value : [value];
      const datatype = input.datatype as DataType;
      const shape = generateShape(key, input.shape, values.length);
      tensors.push({ name: key, datatype, shape, data: encodeJsonData(datatype, values, elementCount(shape), key) });
    } else if (key === PARAMETERS_KEY) {
      if (typeof value !== "object" || value === null || Array.isArray(value)) throw invalidArg(`Expected JSON object for keyword: '${PARAMETERS_KEY}'`);
      for (const [name, parameter] of Object.entries(value)) parameters[name] = parameterOf(name, parameter);
    } else {
      parameters[key] = parameterOf(key, value);
    }
  }
  return { modelName: metadata.name, modelVersion, parameters, inputs: tensors };
}

/**
 * One response as Triton's generate extension writes it (GenerateRequestClass::FinalizeResponse): `id` when set,
 * `model_name`, `model_version` and each output by name, keys in byte order as Triton's map holds them; an output
 * of one element is that element, others a flat array, BYTES as strings.
 */
export function generateResponseJson(response: InferResponse): string {
  const fields = new Map<string, string>();
  if (response.id !== undefined && response.id !== "") fields.set("id", JSON.stringify(response.id));
  fields.set("model_name", JSON.stringify(response.modelName));
  fields.set("model_version", JSON.stringify(response.modelVersion));
  for (const output of response.outputs) {
    const count = elementCount(output.shape);
    const array = [...jsonDataText(output.datatype, output.data, count, output.name)].join("");
    fields.set(output.name, count === 1 ? array.slice(1, -1) : array);
  }
  const keys = [...fields.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${keys.map((key) => `${JSON.stringify(key)}:${fields.get(key)!}`).join(",")}}`;
}

/** Triton's error object: `{"error": message}`. */
export function generateErrorJson(error: InferenceError): string {
  return JSON.stringify({ error: error.message });
}

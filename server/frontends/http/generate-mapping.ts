import {
  bytesElements, clipped, type DataType, elementCount, type InferenceError, type InferResponse, type InferRequest, invalidArg, type ParameterValue, type Tensor, type TensorMetadata,
} from "../../core/index";
import { invalidParameterType, requestIdOf } from "./infer-request-codec";
import { encodeJsonData, jsonDataText } from "./json-tensor-data";

/** The generate request's key whose object holds parameters (Triton's nested request schema). */
const PARAMETERS_KEY = "parameters";

function parameterOf(key: string, value: unknown): ParameterValue {
  if (typeof value === "string" || typeof value === "boolean" || typeof value === "bigint") return value;
  if (typeof value === "number" && Number.isFinite(value)) return value;
  throw invalidParameterType(key);
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

/** The model a generate body is mapped onto: its name and its inputs as model metadata describes them. */
export interface GenerateModel {
  readonly name: string;
  readonly inputs: readonly TensorMetadata[];
}

/**
 * A generate request body as an inference request, mapped as Triton maps it: a top-level key that names one of
 * the model's inputs is that tensor (one element or a flat array, with the input's datatype), `parameters` is an
 * object of parameters, and every other key is a parameter too.
 */
export function generateRequest(body: Record<string, unknown>, model: GenerateModel, modelVersion: string | undefined): InferRequest {
  const inputs = new Map(model.inputs.map((input) => [input.name, input]));
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
      for (const [name, parameter] of Object.entries(value)) {
        try {
          parameters[name] = parameterOf(name, parameter);
        } catch (error) {
          // Triton's RETURN_MSG_IF_ERR around the nested schema's conversion (GenerateRequestClass::ConvertGenerateRequest).
          throw invalidArg(`Converting keyword: '${PARAMETERS_KEY}': ${(error as Error).message}`);
        }
      }
    } else {
      parameters[key] = parameterOf(key, value);
    }
  }
  // Triton reads `id` as the request's id, and maps the key as any other too (a parameter, unless an input has the name).
  return { modelName: model.name, modelVersion, id: requestIdOf(body), parameters, inputs: tensors };
}

/** rapidjson's escapes (writer.h, Writer::WriteString): the two-character ones, else \u00XX with upper-case digits. */
const SHORT_ESCAPES = new Map<number, string>([[0x08, "\\b"], [0x09, "\\t"], [0x0a, "\\n"], [0x0c, "\\f"], [0x0d, "\\r"], [0x22, '\\"'], [0x5c, "\\\\"]]);

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

function escapeOf(code: number): string {
  return SHORT_ESCAPES.get(code) ?? `\\u00${code.toString(16).toUpperCase().padStart(2, "0")}`;
}

/** `text` with the characters rapidjson escapes (controls, the quote, the backslash; nothing past ASCII) escaped. */
function escaped(text: string): string {
  let out = "";
  let plain = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0x20 && code !== 0x22 && code !== 0x5c) continue;
    out += text.slice(plain, i) + escapeOf(code);
    plain = i + 1;
  }
  return plain === 0 ? text : out + text.slice(plain);
}

/** A JSON text's part: text, or bytes that are not UTF-8 (only a BYTES element's can be). */
type JsonPart = string | Buffer;

/**
 * One BYTES element as a JSON string literal, as Triton writes it (rapidjson without encoding validation): its
 * bytes unaltered, quotes, backslashes and control characters escaped. Bytes that are not UTF-8 (a multi-byte
 * character that a token-per-response model splits across responses) reach the client as the model sent them;
 * UTF-8 elements, the usual case, stay text.
 */
function bytesLiteral(element: Uint8Array): JsonPart {
  let text: string;
  try {
    text = STRICT_UTF8.decode(element);
  } catch {
    return Buffer.from(`"${escaped(Buffer.from(element).toString("latin1"))}"`, "latin1");
  }
  return `"${escaped(text)}"`;
}

/** Parts joined: one string while every part is text, else bytes. */
function joined(parts: readonly JsonPart[]): JsonPart {
  if (parts.every((part) => typeof part === "string")) return parts.join("");
  return Buffer.concat(parts.map((part) => (typeof part === "string" ? Buffer.from(part) : part)));
}

function outputJson(output: InferResponse["outputs"][number]): JsonPart {
  const count = elementCount(output.shape);
  if (output.datatype === "BYTES") {
    const literals = bytesElements(output.data, count, output.name).map(bytesLiteral);
    if (count === 1) return literals[0]!;
    return joined(["[", ...literals.flatMap((literal, i) => (i === 0 ? [literal] : [",", literal])), "]"]);
  }
  const array = [...jsonDataText(output.datatype, output.data, count, output.name)].join("");
  return count === 1 ? array.slice(1, -1) : array;
}

/**
 * One response as Triton's generate extension writes it (GenerateRequestClass::FinalizeResponse): `id` when set,
 * `model_name`, `model_version` and each output by name, keys in byte order as Triton's map holds them; an output
 * of one element is that element, others a flat array, BYTES as the model's bytes (see {@link bytesLiteral}): text,
 * or bytes where an element is not UTF-8. Throws INVALID_ARG for an output JSON cannot carry (FP16, BF16) or BYTES
 * that do not match their shape.
 */
export function generateResponseJson(response: InferResponse): JsonPart {
  const fields = new Map<string, JsonPart>();
  if (response.id !== undefined && response.id !== "") fields.set("id", JSON.stringify(response.id));
  fields.set("model_name", JSON.stringify(response.modelName));
  fields.set("model_version", JSON.stringify(response.modelVersion));
  for (const output of response.outputs) fields.set(output.name, outputJson(output));
  const keys = [...fields.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return joined(["{", ...keys.flatMap((key, i) => [`${i === 0 ? "" : ","}${JSON.stringify(key)}:`, fields.get(key)!]), "}"]);
}

/** Triton's error object: `{"error": message}`. */
export function generateErrorJson(error: InferenceError): string {
  return JSON.stringify({ error: error.message });
}

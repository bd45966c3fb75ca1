import { type DataType, isDataType } from "../protocol/datatypes";
import type { InferRequest, OutputTensor, ParameterValue } from "./infer-types";
import { hasJsonForm, jsonToTensorData, tensorDataToJson } from "./json-tensor-values";
import { parseJsonWithBigInts } from "./parse-json-with-bigints";
import { bytesToTensorData, tensorDataToBytes } from "./tensor-data";

/** Header naming the JSON part's length when binary tensors follow it (binary tensor data extension). */
export const INFERENCE_HEADER_CONTENT_LENGTH = "inference-header-content-length";

export interface EncodedHttpInfer {
  readonly body: Buffer;
  readonly headers: Readonly<Record<string, string>>;
}

export interface DecodedHttpInfer {
  readonly modelName: string;
  readonly modelVersion: string;
  readonly id: string | undefined;
  readonly parameters: Readonly<Record<string, ParameterValue>>;
  readonly outputs: OutputTensor[];
}

function parametersJson(parameters: Readonly<Record<string, ParameterValue>>): string | undefined {
  return Object.keys(parameters).length === 0 ? undefined : JSON.stringify(parameters);
}

/**
 * A KServe v2 infer body: a JSON document, followed by the raw bytes of every binary input in input order when
 * any input is binary. The JSON is assembled as text so tensor data is written once, without an object tree.
 */
export function encodeHttpInfer(request: InferRequest): EncodedHttpInfer {
  const binaryParts: Uint8Array[] = [];
  const inputs = request.inputs.map((input) => {
    const head = `{"name":${JSON.stringify(input.name)},"shape":${JSON.stringify(input.shape)},"datatype":"${input.datatype}"`;
    if (input.format === "binary" || !hasJsonForm(input.datatype)) {
      const bytes = tensorDataToBytes(input.datatype, input.data);
      binaryParts.push(bytes);
      return `${head},"parameters":${JSON.stringify({ ...input.parameters, binary_data_size: bytes.byteLength })}}`;
    }
    const parameters = parametersJson(input.parameters);
    return `${head}${parameters === undefined ? "" : `,"parameters":${parameters}`},"data":${tensorDataToJson(input.datatype, input.data, input.name)}}`;
  });
  const requestParameters = request.outputs === undefined && request.outputFormat === "binary"
    ? { ...request.parameters, binary_data_output: true }
    : request.parameters;
  const outputs = request.outputs?.map((output) => JSON.stringify({
    name: output.name,
    parameters: { binary_data: output.format === "binary", ...(output.classification === undefined ? {} : { classification: output.classification }) },
  }));
  const fields = [
    ...(request.id === undefined ? [] : [`"id":${JSON.stringify(request.id)}`]),
    ...(Object.keys(requestParameters).length === 0 ? [] : [`"parameters":${JSON.stringify(requestParameters)}`]),
    `"inputs":[${inputs.join(",")}]`,
    ...(outputs === undefined ? [] : [`"outputs":[${outputs.join(",")}]`]),
  ];
  const json = Buffer.from(`{${fields.join(",")}}`);
  if (binaryParts.length === 0) return { body: json, headers: { "content-type": "application/json" } };
  return {
    body: Buffer.concat([json, ...binaryParts]),
    headers: { "content-type": "application/octet-stream", [INFERENCE_HEADER_CONTENT_LENGTH]: String(json.byteLength) },
  };
}

interface WireOutput {
  readonly name: string;
  readonly datatype: string;
  readonly shape: readonly number[];
  readonly parameters?: Record<string, ParameterValue>;
  readonly data?: unknown;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function malformed(detail: string): Error {
  return new SyntaxError(`malformed inference response: ${detail}`);
}

/**
 * Decodes an infer response body: the JSON part (all of it when `headerLength` is undefined), then each binary
 * output's bytes in output order. Binary outputs are views on `body` where alignment allows.
 */
export function decodeHttpInfer(response: Uint8Array, headerLength: number | undefined): DecodedHttpInfer {
  // A plain view, so BYTES elements come out as Uint8Array (not Buffer) whatever the caller read the body into.
  const body = new Uint8Array(response.buffer, response.byteOffset, response.byteLength);
  const jsonLength = headerLength ?? body.byteLength;
  if (jsonLength > body.byteLength) throw malformed(`the JSON header claims ${jsonLength} bytes of a ${body.byteLength}-byte body`);
  const parsed = parseJsonWithBigInts(Buffer.from(body.buffer, body.byteOffset, jsonLength).toString("utf8"));
  if (!isRecord(parsed) || !Array.isArray(parsed["outputs"])) throw malformed("no 'outputs' array");
  let offset = jsonLength;
  const outputs = (parsed["outputs"] as WireOutput[]).map((output): OutputTensor => {
    const datatype: DataType | undefined = isDataType(output.datatype) ? output.datatype : undefined;
    if (datatype === undefined) throw malformed(`output '${output.name}' has an unknown datatype '${output.datatype}'`);
    const size = output.parameters?.["binary_data_size"];
    let data;
    if (typeof size === "number") {
      if (offset + size > body.byteLength) throw malformed(`output '${output.name}' claims ${size} bytes past the end of the body`);
      data = bytesToTensorData(datatype, body.subarray(offset, offset + size), output.name);
      offset += size;
    } else {
      data = jsonToTensorData(datatype, output.data ?? [], output.name);
    }
    const parameters = output.parameters === undefined ? undefined : withoutBinarySize(output.parameters);
    return { name: output.name, datatype, shape: output.shape, data, ...(parameters === undefined ? {} : { parameters }) } as OutputTensor;
  });
  return {
    modelName: String(parsed["model_name"]),
    modelVersion: String(parsed["model_version"] ?? ""),
    id: typeof parsed["id"] === "string" ? parsed["id"] : undefined,
    parameters: isRecord(parsed["parameters"]) ? (parsed["parameters"] as Record<string, ParameterValue>) : {},
    outputs,
  };
}

/** `binary_data_size` is framing, not information for the caller. */
function withoutBinarySize(parameters: Record<string, ParameterValue>): Record<string, ParameterValue> | undefined {
  const { binary_data_size: _size, ...rest } = parameters;
  return Object.keys(rest).length === 0 ? undefined : rest;
}

import { elementCount, type InferResponse } from "../../core/index";
import type { OutputEncoding } from "./infer-request-codec";
import { decodeJsonData } from "./json-tensor-data";

export interface EncodedInferResponse {
  readonly body: Buffer;
  /** Set when binary outputs follow the JSON header. */
  readonly headerLength: number | undefined;
}

/**
 * Writes a KServe v2 infer response in Triton's field order (id, model_name, model_version, outputs), with each
 * output either as JSON `data` or appended as binary with `binary_data_size`.
 */
export function encodeInferResponse(response: InferResponse, encoding: OutputEncoding): EncodedInferResponse {
  const binaryParts: Uint8Array[] = [];
  const outputs = response.outputs.map((output) => {
    const head = `{"name":${JSON.stringify(output.name)},"datatype":"${output.datatype}","shape":${JSON.stringify(output.shape)}`;
    if (encoding.allBinary || encoding.binaryOutputs.has(output.name)) {
      binaryParts.push(output.data);
      return `${head},"parameters":{"binary_data_size":${output.data.byteLength}}}`;
    }
    return `${head},"data":${decodeJsonData(output.datatype, output.data, elementCount(output.shape), output.name)}}`;
  });
  const id = response.id ? `"id":${JSON.stringify(response.id)},` : "";
  const json = `{${id}"model_name":${JSON.stringify(response.modelName)},"model_version":${JSON.stringify(response.modelVersion)},"outputs":[${outputs.join(",")}]}`;
  if (binaryParts.length === 0) return { body: Buffer.from(json), headerLength: undefined };
  const header = Buffer.from(json);
  return { body: Buffer.concat([header, ...binaryParts]), headerLength: header.byteLength };
}

import type { InferResponse } from "../../core/index";
import type { ModelInferResponseMessage } from "./grpc-messages";

/**
 * The core's response -> a `ModelInferResponse` as Triton writes it: every output's data in
 * `raw_output_contents` (one entry per output, in `outputs` order), whatever form the request used. The
 * output bytes are referenced, not copied.
 */
export function encodeModelInferResponse(response: InferResponse): ModelInferResponseMessage {
  return {
    model_name: response.modelName,
    model_version: response.modelVersion,
    id: response.id ?? "",
    outputs: response.outputs.map((output) => ({ name: output.name, datatype: output.datatype, shape: [...output.shape] })),
    raw_output_contents: response.outputs.map((output) => output.data),
  };
}

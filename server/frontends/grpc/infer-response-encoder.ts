import type { InferResponse } from "../../core/index";
import { NO_DATA, type PlacedOutput } from "../shared-memory/tensor-shared-memory";
import type { ModelInferResponse } from "../../../protocol/grpc-types/longs-as-strings/inference/ModelInferResponse";

/** A ModelInferResponse as encoded here: every output's bytes in `raw_output_contents`, which frameInferResponse writes itself. */
export type EncodedModelInferResponse = Omit<ModelInferResponse, "raw_output_contents"> & { raw_output_contents: Uint8Array[] };

/**
 * The core's response -> a `ModelInferResponse` as Triton writes it: every output's data in
 * `raw_output_contents` (one entry per output, in `outputs` order), whatever form the request used. The
 * output bytes are referenced, not copied. An output written to shared memory keeps its entry, empty (as in
 * Triton, so clients still find the others by position), and names its region and size in its parameters.
 */
export function encodeModelInferResponse(response: InferResponse, placed: ReadonlyMap<string, PlacedOutput>): EncodedModelInferResponse {
  return {
    model_name: response.modelName,
    model_version: response.modelVersion,
    id: response.id ?? "",
    outputs: response.outputs.map((output) => {
      const shared = placed.get(output.name);
      const tensor = { name: output.name, datatype: output.datatype, shape: [...output.shape] };
      if (shared === undefined) return tensor;
      return {
        ...tensor,
        parameters: { shared_memory_region: { string_param: shared.region }, shared_memory_byte_size: { int64_param: String(shared.byteSize) } },
      };
    }),
    raw_output_contents: response.outputs.map((output) => (placed.has(output.name) ? NO_DATA : output.data)),
  };
}

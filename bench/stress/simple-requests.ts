import type { RestRequest } from "./stress-clients";

/** simple's INT32[1,16] inputs: OUTPUT0 = INPUT0 + INPUT1. */
const INPUT0 = Int32Array.from({ length: 16 }, (_, i) => i);
const INPUT1 = Int32Array.from({ length: 16 }, () => 1);

/** A valid JSON infer request for `model` (a copy of the example `simple`). */
export function simpleRestRequest(model: string): RestRequest {
  return {
    method: "POST", path: `/v2/models/${model}/infer`, headers: { "content-type": "application/json" },
    body: JSON.stringify({ inputs: [INPUT0, INPUT1].map((data, i) => ({ name: `INPUT${i}`, datatype: "INT32", shape: [1, 16], data: [...data] })) }),
  };
}

/** The same request as a gRPC ModelInferRequest with raw input contents. */
export function simpleGrpcMessage(model: string): Record<string, unknown> {
  return {
    model_name: model,
    inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16] })),
    raw_input_contents: [INPUT0, INPUT1].map((data) => Buffer.from(data.buffer)),
  };
}

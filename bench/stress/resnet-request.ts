import type { RestRequest } from "./stress-clients";

const IMAGE_BYTES = 3 * 224 * 224 * 4;

/** resnet50's binary infer request (a mid-grey image, output in binary), encoded once. */
export function resnetRequest(): RestRequest {
  const header = JSON.stringify({
    inputs: [{ name: "input", datatype: "FP32", shape: [1, 3, 224, 224], parameters: { binary_data_size: IMAGE_BYTES } }],
    outputs: [{ name: "output", parameters: { binary_data: true } }],
  });
  const image = new Float32Array(3 * 224 * 224).fill(0.5);
  return {
    method: "POST", path: "/v2/models/resnet50/infer",
    headers: { "content-type": "application/octet-stream", "inference-header-content-length": String(Buffer.byteLength(header)) },
    body: Buffer.concat([Buffer.from(header), Buffer.from(image.buffer)]),
  };
}

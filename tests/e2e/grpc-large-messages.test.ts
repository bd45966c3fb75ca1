import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../helpers/server-process";
import { type GrpcMessage, GrpcTestClient, modelInferRequest, streamResponses } from "./grpc-transport";

/** One 3x224x224 FP32 image: 602,112 bytes, about 37 HTTP/2 DATA frames of 16 KiB. */
const ELEMENTS = 3 * 224 * 224;

const image = (seed: number): Float32Array => Float32Array.from({ length: ELEMENTS }, (_, i) => seed * 1000 + (i % 997));

const identityRequest = (seed: number, id: string): GrpcMessage => {
  const data = image(seed);
  return { ...modelInferRequest({ model: "identity_fp32", inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, ELEMENTS], raw: new Uint8Array(data.buffer) }] }, true), id };
};

const outputOf = (response: GrpcMessage): Float32Array => {
  const raw = (response as { raw_output_contents: Buffer[] }).raw_output_contents[0]!;
  return new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength));
};

describe("gRPC requests of many DATA frames", () => {
  let server: RunningServer;
  let client: GrpcTestClient;
  beforeAll(async () => {
    server = await startServer({ services: ["grpc"] });
    client = new GrpcTestClient(server.grpcAddress!);
  });
  afterAll(async () => {
    client?.close();
    await server?.stop();
  });

  it("ModelInfer answers 600 KB tensors byte for byte, calls in flight together", async () => {
    const responses = await Promise.all([1, 2, 3, 4].map((seed) => client.unary("ModelInfer", identityRequest(seed, `call-${seed}`))));
    for (const [index, response] of responses.entries()) expect(outputOf(response)).toEqual(image(index + 1));
  });

  it("ModelStreamInfer answers consecutive 600 KB requests of one stream byte for byte, in order", async () => {
    const requests = [5, 6, 7, 8, 9].map((seed) => identityRequest(seed, `message-${seed}`));
    const responses = await streamResponses(client.modelStreamInfer(), requests) as { error_message: string; infer_response: GrpcMessage & { id: string } }[];
    expect(responses.map((r) => r.infer_response.id)).toEqual(requests.map((r) => r["id"]));
    for (const [index, response] of responses.entries()) expect(outputOf(response.infer_response)).toEqual(image(index + 5));
  });
});

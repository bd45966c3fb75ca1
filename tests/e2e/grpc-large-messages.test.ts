import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../helpers/server-process";
import { status } from "@grpc/grpc-js";
import { type GrpcMessage, grpcCallError, GrpcTestClient, modelInferRequest, streamResponses } from "./grpc-transport";

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

  describe("a message of at least 1 MiB, decoded on a worker thread", () => {
    /** 20,000 BYTES elements of 60 bytes as typed `bytes_contents`: 1.3 MB, each element a field of its own. */
    const elements = Array.from({ length: 20_000 }, (_, i) => Buffer.from(`${String(i).padStart(8, "0")}:${"x".repeat(51)}`));
    const typedBytes = (model: string, shape: number): GrpcMessage => ({
      model_name: model, id: "big", inputs: [{ name: "INPUT0", datatype: "BYTES", shape: ["1", String(shape)], contents: { bytes_contents: elements } }],
    });

    it("answers typed BYTES contents element for element", async () => {
      const response = await client.unary<{ id: string; raw_output_contents: Buffer[] }>("ModelInfer", typedBytes("identity_bytes", elements.length));
      expect(response.id).toBe("big");
      const raw = response.raw_output_contents[0]!;
      const decoded: Buffer[] = [];
      for (let offset = 0; offset < raw.byteLength;) {
        const length = raw.readUInt32LE(offset);
        decoded.push(raw.subarray(offset + 4, offset + 4 + length));
        offset += 4 + length;
      }
      expect(decoded).toEqual(elements);
    });

    it("keeps its turn among a ModelStreamInfer call's responses while it is decoded", async () => {
      const small = (id: string): GrpcMessage => ({ model_name: "identity_bytes", id, inputs: [{ name: "INPUT0", datatype: "BYTES", shape: ["1", "1"], contents: { bytes_contents: [Buffer.from(id)] } }] });
      const requests = [small("first"), { ...typedBytes("identity_bytes", elements.length), id: "large" }, small("third"), { ...typedBytes("no_such_model", 1), id: "unknown" }, small("fifth")];
      const responses = await streamResponses(client.modelStreamInfer(), requests) as { error_message: string; infer_response: { id: string } }[];
      expect(responses.map((r) => [r.infer_response.id, r.error_message])).toEqual([
        ["first", ""], ["large", ""], ["third", ""], ["unknown", "Request for unknown model: 'no_such_model' is not found"], ["fifth", ""],
      ]);
    });

    it("refuses as a small message is refused: an unknown model first, then the tensors' mistakes, in the same words", async () => {
      const small = { ...typedBytes("identity_bytes", 3), inputs: [{ name: "INPUT0", datatype: "BYTES", shape: ["1", "3"], contents: { bytes_contents: elements.slice(0, 2) } }] };
      const smallError = await grpcCallError(client.unary("ModelInfer", small));
      const largeError = await grpcCallError(client.unary("ModelInfer", typedBytes("identity_bytes", elements.length + 1)));
      expect(largeError.code).toBe(smallError.code);
      expect(smallError.details).toBe("input 'INPUT0' holds 2 BYTES elements, but its shape needs 3");
      expect(largeError.details).toBe(`input 'INPUT0' holds ${elements.length} BYTES elements, but its shape needs ${elements.length + 1}`);
      const unknown = await grpcCallError(client.unary("ModelInfer", typedBytes("no_such_model", elements.length + 1)));
      expect([unknown.code, unknown.details]).toEqual([status.NOT_FOUND, "Request for unknown model: 'no_such_model' is not found"]);
    });
  });
});

import { rmSync } from "node:fs";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { float16Value } from "../../protocol/float16";
import { mugInputFp16, squeezenetRepository } from "../helpers/squeezenet";
import { type RunningServer, startServer } from "../helpers/server-process";
import { caseOutputs, GrpcCallError, type GrpcMessage, GrpcTestClient } from "./grpc-transport";

describe("real SqueezeNet 1.1 (FP16) over gRPC", () => {
  let server: RunningServer;
  let client: GrpcTestClient;
  let repository: string;
  let mug: Buffer;
  beforeAll(async () => {
    repository = squeezenetRepository();
    mug = Buffer.from(mugInputFp16());
    server = await startServer({ repository, services: ["http", "grpc"] });
    client = new GrpcTestClient(server.grpcAddress!);
  });
  afterAll(async () => {
    client?.close();
    await server?.stop();
    rmSync(repository, { recursive: true, force: true });
  });

  const mugRequest = (outputs: GrpcMessage[]): GrpcMessage => ({
    model_name: "squeezenet",
    inputs: [{ name: "data_0", datatype: "FP16", shape: [1, 3, 224, 224] }],
    outputs,
    raw_input_contents: [mug],
  });

  it("classifies mug.jpg as 504 COFFEE MUG through the classification extension (int64_param)", async () => {
    const response = await client.unary("ModelInfer", mugRequest([{ name: "softmaxout_1", parameters: { classification: { int64_param: "3" } } }]));
    const [classes] = caseOutputs(response);
    expect(classes).toMatchObject({ name: "softmaxout_1", datatype: "BYTES", shape: [3] });
    expect(classes!.values[0]).toMatch(/^0\.98\d{4}:504:COFFEE MUG$/);
    expect(classes!.values[1]).toMatch(/^0\.01\d{4}:968:CUP$/);
  });

  it("returns the FP16 probabilities in raw_output_contents, top-1 504 at about 0.987", async () => {
    const [probabilities] = caseOutputs(await client.unary("ModelInfer", mugRequest([])));
    expect(probabilities).toMatchObject({ datatype: "FP16", shape: [1, 1000, 1, 1] });
    const floats = (probabilities!.values as number[]).map(float16Value);
    expect(floats.indexOf(Math.max(...floats))).toBe(504);
    expect(floats[504]).toBeCloseTo(0.9873, 2);
  });

  it("refuses FP16 as typed contents: FP16 travels only in raw_input_contents, as in Triton", async () => {
    const request = { ...mugRequest([]), inputs: [{ name: "data_0", datatype: "FP16", shape: [1, 3, 224, 224], contents: {} }], raw_input_contents: [] };
    const error = await client.unary("ModelInfer", request).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(GrpcCallError);
    expect(error).toMatchObject({ code: status.INVALID_ARGUMENT, details: expect.stringMatching(/FP16 data .* can only be sent in raw_input_contents/) });
  });
});

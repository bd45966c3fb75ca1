import { connect, type IncomingHttpHeaders } from "node:http2";
import path from "node:path";
import { inflateSync, gunzipSync } from "node:zlib";
import type { MethodDefinition, ServiceDefinition } from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../helpers/server-process";
import { caseOutputs, type GrpcMessage, GrpcTestClient, modelInferRequest, PROTO_DIRECTORY, streamResponses } from "./grpc-transport";

const SIMPLE = {
  model: "simple",
  inputs: [
    { name: "INPUT0", datatype: "INT32" as const, shape: [1, 16], values: Array.from({ length: 16 }, (_, i) => i) },
    { name: "INPUT1", datatype: "INT32" as const, shape: [1, 16], values: Array.from({ length: 16 }, () => 1) },
  ],
};

const definition = loadSync(path.join(PROTO_DIRECTORY, "grpc_service.proto"), { keepCase: true, longs: String, defaults: true, oneofs: true, includeDirs: [PROTO_DIRECTORY] });
const modelInfer = (definition["inference.GRPCInferenceService"] as ServiceDefinition)["ModelInfer"] as MethodDefinition<GrpcMessage, GrpcMessage>;

/** One ModelInfer over a bare HTTP/2 stream, to see what grpc-js clients hide: the response's encoding and framing. */
function rawModelInfer(port: number, acceptEncoding: string): Promise<{ headers: IncomingHttpHeaders; frame: Buffer }> {
  return new Promise((resolve, reject) => {
    const session = connect(`http://127.0.0.1:${port}`);
    session.on("error", reject);
    const message = modelInfer.requestSerialize(modelInferRequest(SIMPLE, true));
    const frame = Buffer.alloc(5 + message.byteLength);
    frame.writeUInt32BE(message.byteLength, 1);
    message.copy(frame, 5);
    const stream = session.request({
      ":method": "POST", ":path": "/inference.GRPCInferenceService/ModelInfer", "content-type": "application/grpc", te: "trailers",
      "grpc-accept-encoding": acceptEncoding,
    });
    let headers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on("response", (h) => (headers = h));
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => {
      session.close();
      resolve({ headers, frame: Buffer.concat(chunks) });
    });
    stream.on("error", reject);
    stream.end(frame);
  });
}

describe("--grpc-infer-response-compression-level (Triton's flag), and --grpc-infer-thread-count accepted", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ services: ["http", "grpc"], args: ["--grpc-infer-response-compression-level", "high", "--grpc-infer-thread-count", "4"] });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("compresses ModelInfer responses with the algorithm gRPC's C-core picks for the level (high: deflate)", async () => {
    const { headers, frame } = await rawModelInfer(server.grpcPort!, "identity,deflate,gzip");
    expect(headers["grpc-encoding"]).toBe("deflate");
    expect(frame[0]).toBe(1);
    expect(frame.readUInt32BE(1)).toBe(frame.byteLength - 5);
    const response = modelInfer.responseDeserialize(inflateSync(frame.subarray(5)));
    expect(caseOutputs(response)[0]!.values).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
  });

  it("uses what the client accepts (gzip only), and sends plain messages to a client that accepts none", async () => {
    const gzip = await rawModelInfer(server.grpcPort!, "identity,gzip");
    expect(gzip.headers["grpc-encoding"]).toBe("gzip");
    expect(caseOutputs(modelInfer.responseDeserialize(gunzipSync(gzip.frame.subarray(5))))[1]!.values).toEqual(Array.from({ length: 16 }, (_, i) => i - 1));
    const plain = await rawModelInfer(server.grpcPort!, "identity");
    expect(plain.headers["grpc-encoding"]).toBe("identity");
    expect(plain.frame[0]).toBe(0);
  });

  it("serves grpc-js clients, which decompress, over ModelInfer and ModelStreamInfer", async () => {
    const client = new GrpcTestClient(server.grpcAddress!);
    try {
      expect(caseOutputs(await client.unary("ModelInfer", modelInferRequest(SIMPLE, false)))[0]!.values).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
      expect(await client.unary("ServerLive", {})).toEqual({ live: true });
      const streamed = await streamResponses(client.modelStreamInfer(), [modelInferRequest(SIMPLE, true), modelInferRequest(SIMPLE, false)]);
      expect(streamed.map((r) => caseOutputs(r["infer_response"] as GrpcMessage)[0]!.values)).toEqual([0, 1].map(() => Array.from({ length: 16 }, (_, i) => i + 1)));
    } finally {
      client.close();
    }
  });
});

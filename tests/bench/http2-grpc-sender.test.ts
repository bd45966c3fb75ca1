import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Http2GrpcSender } from "../../bench/http2-grpc-sender";
import { type RunningServer, startServer } from "../helpers/server-process";

const inputs = ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: Int32Array.from({ length: 16 }, (_, i) => i) }));

describe("the bench's lean node:http2 gRPC load generator", () => {
  let server: RunningServer;
  let sender: Http2GrpcSender;
  beforeAll(async () => {
    server = await startServer({ services: ["grpc"] });
    sender = new Http2GrpcSender(server.grpcAddress!);
  });
  afterAll(async () => {
    sender?.close();
    await server?.stop();
  });

  it("completes unary ModelInfer calls in flight together, and reports the server's status when one fails", async () => {
    const send = sender.unary("simple", inputs);
    await Promise.all(Array.from({ length: 16 }, () => send()));
    await expect(sender.unary("nope", inputs)()).rejects.toThrow(/grpc-status 5 Request for unknown model: 'nope' is not found/);
  });

  it("reuses one ModelStreamInfer stream per request in flight, and rejects a response carrying an error", async () => {
    const send = sender.streaming("simple", inputs);
    for (let round = 0; round < 3; round++) await Promise.all(Array.from({ length: 4 }, () => send()));
    await expect(sender.streaming("nope", inputs)()).rejects.toThrow(/Request for unknown model: 'nope' is not found/);
  });
});

import { afterAll } from "vitest";
import { GrpcTestClient, grpcTransport } from "./grpc-transport";
import { describeProtocolCases } from "./protocol-cases";

let client: GrpcTestClient | undefined;
afterAll(() => client?.close());

describeProtocolCases(
  "KServe v2 gRPC: shared protocol case table",
  { services: ["http", "grpc"] },
  (server) => {
    client = new GrpcTestClient(server.grpcAddress!);
    return [grpcTransport(client, false), grpcTransport(client, true)];
  },
  [{ name: "grpc-typed", binary: false }, { name: "grpc-raw", binary: true }],
);

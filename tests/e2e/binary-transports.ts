import type { RunningServer } from "../helpers/server-process";
import { GrpcTestClient, grpcTransport } from "./grpc-transport";
import { httpTransport } from "./http-transport";
import type { ProtocolTransport } from "./protocol-transport";

export type Protocol = "REST" | "gRPC";

/** A server's REST (binary extension) and gRPC (raw contents) transports, as image and TypeScript-model suites use them. */
export interface BinaryTransports {
  readonly byProtocol: Readonly<Record<Protocol, ProtocolTransport>>;
  close(): void;
}

/** Needs a server started with the gRPC service. */
export function binaryTransports(server: RunningServer): BinaryTransports {
  const grpc = new GrpcTestClient(server.grpcAddress!);
  return { byProtocol: { REST: httpTransport(server.httpUrl, true), gRPC: grpcTransport(grpc, true) }, close: () => grpc.close() };
}

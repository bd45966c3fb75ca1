/**
 * Child process of `npm run bench`: the physical limit for a tiny model over gRPC. A bare @grpc/grpc-js server
 * whose only method, GRPCInferenceService/ModelInfer, ignores the request bytes and answers with fixed bytes: the
 * server's own response to the same request, serialized once at start from our grpc_service.proto.
 */
import path from "node:path";
import { type handleUnaryCall, Server, ServerCredentials, type ServiceDefinition } from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { findPackageRoot } from "../common/find-package-root";

/** The response to replay, as a ModelInferResponse message with its raw contents in base64. */
export interface BareGrpcResponse {
  readonly model_name: string;
  readonly model_version: string;
  readonly outputs: readonly { readonly name: string; readonly datatype: string; readonly shape: readonly number[] }[];
  readonly raw_output_contents_base64: readonly string[];
}

const identity = (bytes: Buffer): Buffer => bytes;

async function main(): Promise<void> {
  const response = JSON.parse(process.argv[2] ?? "{}") as BareGrpcResponse;
  const protoDir = path.join(findPackageRoot(__dirname), "protocol", "proto");
  const definition = loadSync(path.join(protoDir, "grpc_service.proto"), { keepCase: true, includeDirs: [protoDir] });
  const modelInfer = (definition["inference.GRPCInferenceService"] as ServiceDefinition)["ModelInfer"]!;
  const body = modelInfer.responseSerialize({
    model_name: response.model_name, model_version: response.model_version, outputs: response.outputs,
    raw_output_contents: response.raw_output_contents_base64.map((contents) => Buffer.from(contents, "base64")),
  });
  const service: ServiceDefinition = {
    ModelInfer: { ...modelInfer, requestDeserialize: identity, responseSerialize: identity },
  };
  const answer: handleUnaryCall<Buffer, Buffer> = (_call, callback) => callback(null, body);
  const server = new Server();
  server.addService(service, { ModelInfer: answer });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, bound) => (error === null ? resolve(bound) : reject(error))));
  process.stdout.write(`${JSON.stringify({ service: "bare-grpc", port })}\n`);
  process.once("SIGTERM", () => server.tryShutdown(() => process.exit(0)));
}

void main();

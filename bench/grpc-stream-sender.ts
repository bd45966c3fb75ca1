import path from "node:path";
import { type ClientDuplexStream, credentials, Client, Metadata, type ServiceDefinition } from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { findPackageRoot } from "../common/find-package-root";
import type { RequestSender } from "../tools/perf/index";

/** An input tensor as raw little-endian values (as a typed array holds them on this machine). */
export interface RawInput {
  readonly name: string;
  readonly datatype: string;
  readonly shape: readonly number[];
  readonly data: Int32Array | Float32Array;
}

const identity = (bytes: Buffer): Buffer => bytes;

/** An inference RPC's request and response codec, from the same proto files and loader as the client's. */
export function inferenceMethod(name: "ModelInfer" | "ModelStreamInfer"): ServiceDefinition[string] {
  const protoDir = path.join(findPackageRoot(__dirname), "protocol", "proto");
  const definition = loadSync(path.join(protoDir, "grpc_service.proto"), { keepCase: true, longs: String, defaults: true, oneofs: true, includeDirs: [protoDir] });
  return (definition["inference.GRPCInferenceService"] as ServiceDefinition)[name]!;
}

/** A ModelInferRequest of `model` with `inputs` as raw contents, serialized (ModelInfer and ModelStreamInfer share it). */
export function serializedInferRequest(method: ServiceDefinition[string], model: string, inputs: readonly RawInput[]): Buffer {
  return method.requestSerialize({
    model_name: model, inputs: inputs.map(({ name, datatype, shape }) => ({ name, datatype, shape })),
    raw_input_contents: inputs.map(({ data }) => Buffer.from(data.buffer, data.byteOffset, data.byteLength)),
  });
}

/** A grpc-js channel whose `send` makes one request over ModelStreamInfer, one open stream per request in flight. */
export class GrpcStreamSender {
  readonly #client: Client;
  readonly #method = inferenceMethod("ModelStreamInfer");
  readonly #idle: ClientDuplexStream<Buffer, Buffer>[] = [];
  readonly #open = new Set<ClientDuplexStream<Buffer, Buffer>>();

  constructor(address: string, flowControlWindowBytes = 8 * 1024 * 1024) {
    // The same channel options as the repository's client (client/grpc-transport.ts): its receive window.
    this.#client = new Client(address, credentials.createInsecure(), { "grpc-node.flow_control_window": flowControlWindowBytes, "grpc.max_receive_message_length": -1 });
  }

  /**
   * Sends the request (serialized once) on an idle stream, or a new one, and resolves with its response decoded,
   * so the load generator pays what the unary client pays.
   */
  sender(model: string, inputs: readonly RawInput[]): RequestSender {
    const payload = serializedInferRequest(this.#method, model, inputs);
    return async () => {
      const stream = this.#idle.pop() ?? this.#openStream();
      const response = await new Promise<Buffer>((resolve, reject) => {
        const onError = (error: Error): void => {
          stream.off("data", onData);
          reject(error);
        };
        const onData = (bytes: Buffer): void => {
          stream.off("error", onError);
          resolve(bytes);
        };
        stream.once("data", onData);
        stream.once("error", onError);
        stream.write(payload);
      });
      const receivedAt = process.hrtime.bigint();
      const decoded = this.#method.responseDeserialize(response) as { error_message: string };
      if (decoded.error_message !== "") throw new Error(decoded.error_message);
      this.#idle.push(stream);
      return { sendNs: 0, receiveNs: Number(process.hrtime.bigint() - receivedAt) };
    };
  }

  #openStream(): ClientDuplexStream<Buffer, Buffer> {
    const stream = this.#client.makeBidiStreamRequest<Buffer, Buffer>(this.#method.path, identity, identity, new Metadata());
    this.#open.add(stream);
    // A stream that fails while idle is dropped; one in use reports its error to its request.
    stream.on("error", () => {
      this.#open.delete(stream);
      const index = this.#idle.indexOf(stream);
      if (index >= 0) this.#idle.splice(index, 1);
    });
    return stream;
  }

  close(): void {
    for (const stream of this.#open) stream.end();
    this.#client.close();
  }
}

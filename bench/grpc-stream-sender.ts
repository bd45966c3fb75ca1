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

/**
 * ModelStreamInfer streams kept open for reuse, one per request in flight: a request takes an idle one (or opens
 * another), exchanges one message on it and gives it back; a stream that fails or closes is dropped.
 */
export class StreamPool<Stream> {
  readonly #idle: Stream[] = [];
  readonly #open = new Set<Stream>();

  /** `start` opens a stream and calls `drop` when it fails or closes. */
  constructor(private readonly start: (drop: () => void) => Stream) {}

  /**
   * Sends one request on a pooled stream with `exchange` (which resolves with the response message, unframed) and
   * resolves with it decoded, so the load generator pays what the unary client pays.
   */
  sender(method: ServiceDefinition[string], exchange: (stream: Stream) => Promise<Buffer>): RequestSender {
    return async () => {
      const stream = this.#idle.pop() ?? this.#openStream();
      const response = await exchange(stream);
      const receivedAt = process.hrtime.bigint();
      const decoded = method.responseDeserialize(response) as { error_message: string };
      if (decoded.error_message !== "") throw new Error(decoded.error_message);
      this.#idle.push(stream);
      return { sendNs: 0, receiveNs: Number(process.hrtime.bigint() - receivedAt) };
    };
  }

  /** Every stream open now, idle or in use. */
  get open(): Iterable<Stream> {
    return this.#open;
  }

  #openStream(): Stream {
    const stream: Stream = this.start(() => {
      this.#open.delete(stream);
      const index = this.#idle.indexOf(stream);
      if (index >= 0) this.#idle.splice(index, 1);
    });
    this.#open.add(stream);
    return stream;
  }
}

/** A grpc-js channel whose `send` makes one request over ModelStreamInfer, one open stream per request in flight. */
export class GrpcStreamSender {
  readonly #client: Client;
  readonly #method = inferenceMethod("ModelStreamInfer");
  readonly #streams = new StreamPool<ClientDuplexStream<Buffer, Buffer>>((drop) => {
    const stream = this.#client.makeBidiStreamRequest<Buffer, Buffer>(this.#method.path, identity, identity, new Metadata());
    // A stream that fails while idle is dropped; one in use reports its error to its request.
    stream.on("error", drop);
    return stream;
  });

  constructor(address: string, flowControlWindowBytes = 8 * 1024 * 1024) {
    // The same channel options as the repository's client (client/grpc-transport.ts): its receive window.
    this.#client = new Client(address, credentials.createInsecure(), { "grpc-node.flow_control_window": flowControlWindowBytes, "grpc.max_receive_message_length": -1 });
  }

  /** Sends the request (serialized once) on a pooled stream and resolves with its response decoded. */
  sender(model: string, inputs: readonly RawInput[]): RequestSender {
    const payload = serializedInferRequest(this.#method, model, inputs);
    return this.#streams.sender(this.#method, (stream) => new Promise<Buffer>((resolve, reject) => {
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
    }));
  }

  close(): void {
    for (const stream of this.#streams.open) stream.end();
    this.#client.close();
  }
}

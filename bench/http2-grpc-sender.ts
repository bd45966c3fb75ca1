import { type ClientHttp2Session, type ClientHttp2Stream, connect, constants } from "node:http2";
import { GrpcMessageAssembler } from "../server/frontends/grpc/grpc-message-assembler";
import type { RequestSender } from "../tools/perf/index";
import { inferenceMethod, type RawInput, serializedInferRequest } from "./grpc-stream-sender";

const SERVICE = "/inference.GRPCInferenceService/";
const PREFIX_BYTES = 5;

/** `payload` behind gRPC's 5-byte prefix (not compressed, big-endian length), as one buffer made once. */
function framed(payload: Buffer): Buffer {
  const message = Buffer.allocUnsafe(PREFIX_BYTES + payload.byteLength);
  message.writeUInt8(0, 0);
  message.writeUInt32BE(payload.byteLength, 1);
  payload.copy(message, PREFIX_BYTES);
  return message;
}

function requestHeaders(method: string): Record<string, string> {
  return {
    [constants.HTTP2_HEADER_METHOD]: "POST", [constants.HTTP2_HEADER_PATH]: `${SERVICE}${method}`,
    [constants.HTTP2_HEADER_CONTENT_TYPE]: "application/grpc", te: "trailers",
  };
}

/** One open ModelStreamInfer stream: a request written, its one response read. */
class OpenStream {
  readonly #assembler = new GrpcMessageAssembler(-1);
  #waiting: { resolve(message: Buffer): void; reject(error: Error): void } | undefined;

  constructor(readonly stream: ClientHttp2Stream, onEnd: () => void) {
    const fail = (error: Error): void => {
      onEnd();
      this.#waiting?.reject(error);
      this.#waiting = undefined;
    };
    stream.on("data", (chunk: Buffer) => {
      for (const message of this.#assembler.write(chunk)) {
        const waiting = this.#waiting;
        this.#waiting = undefined;
        waiting?.resolve(message);
      }
    });
    stream.once("error", fail);
    stream.once("close", () => fail(new Error("the ModelStreamInfer stream closed")));
  }

  /** Writes one framed request; resolves with the next response message, prefix included. */
  exchange(message: Buffer): Promise<Buffer> {
    const response = new Promise<Buffer>((resolve, reject) => (this.#waiting = { resolve, reject }));
    this.stream.write(message);
    return response;
  }
}

/**
 * A gRPC load generator as lean as undici is for HTTP: ModelInfer and ModelStreamInfer on one `node:http2` session,
 * each request framed once and resent as the same bytes, each response reassembled as its chunks arrive and decoded
 * as the repository's client decodes it (protobufjs). grpc-js's client spends 2-3x undici's CPU per request (it
 * copies a prepared message behind its prefix on every call and keeps and joins the response's chunks), on the same
 * two cores as the server, so with it the gRPC/HTTP ratios measure the clients as much as the server; perf_analyzer
 * is C++ for the same reason. No TLS, deadlines or metadata: only what the bench's requests need.
 */
export class Http2GrpcSender {
  readonly #session: ClientHttp2Session;
  readonly #unaryMethod = inferenceMethod("ModelInfer");
  readonly #streamMethod = inferenceMethod("ModelStreamInfer");
  readonly #idle: OpenStream[] = [];
  readonly #open = new Set<OpenStream>();

  constructor(address: string, windowBytes = 8 * 1024 * 1024) {
    this.#session = connect(`http://${address}`, { settings: { initialWindowSize: windowBytes } });
    this.#session.on("connect", () => this.#session.setLocalWindowSize(windowBytes));
    this.#session.on("error", () => undefined);
  }

  /** Unary ModelInfer calls, one HTTP/2 stream each; resolves once the trailers say OK. */
  unary(model: string, inputs: readonly RawInput[]): RequestSender {
    const message = framed(serializedInferRequest(this.#unaryMethod, model, inputs));
    const headers = requestHeaders("ModelInfer");
    return () => new Promise((resolve, reject) => {
      const stream = this.#session.request(headers);
      const assembler = new GrpcMessageAssembler(-1);
      // The response leaves these closures once decoded: node:http2 keeps a finished stream, and so its listeners,
      // long enough to be promoted, and a 600 KB response kept with it was freed only by a mark-compact (one every
      // ~30 calls, 0.7 ms of GC per call, half the client's CPU; measured with --trace-gc on identity_fp32).
      let response: Buffer | undefined;
      let status: string | undefined;
      let details = "";
      stream.on("response", (head) => {
        // A call that fails before any message answers with its status in the headers ("trailers-only").
        if (head["grpc-status"] !== undefined) [status, details] = [String(head["grpc-status"]), String(head["grpc-message"] ?? "")];
      });
      stream.on("data", (chunk: Buffer) => (response = assembler.write(chunk)[0] ?? response));
      stream.on("trailers", (trailers) => [status, details] = [String(trailers["grpc-status"]), String(trailers["grpc-message"] ?? "")]);
      stream.once("error", reject);
      stream.once("close", () => {
        if (status !== "0" || response === undefined) {
          reject(new Error(`ModelInfer failed: grpc-status ${status ?? "none"} ${decodeURIComponent(details)}`));
          return;
        }
        const receivedAt = process.hrtime.bigint();
        this.#unaryMethod.responseDeserialize(response.subarray(PREFIX_BYTES));
        response = undefined;
        resolve({ sendNs: 0, receiveNs: Number(process.hrtime.bigint() - receivedAt) });
      });
      stream.end(message);
    });
  }

  /** ModelStreamInfer: each request on an idle open stream, or a new one; resolves with its one response decoded. */
  streaming(model: string, inputs: readonly RawInput[]): RequestSender {
    const message = framed(serializedInferRequest(this.#streamMethod, model, inputs));
    return async () => {
      const open = this.#idle.pop() ?? this.#openStream();
      const response = await open.exchange(message);
      const receivedAt = process.hrtime.bigint();
      const decoded = this.#streamMethod.responseDeserialize(response.subarray(PREFIX_BYTES)) as { error_message: string };
      if (decoded.error_message !== "") throw new Error(decoded.error_message);
      this.#idle.push(open);
      return { sendNs: 0, receiveNs: Number(process.hrtime.bigint() - receivedAt) };
    };
  }

  #openStream(): OpenStream {
    const open = new OpenStream(this.#session.request(requestHeaders("ModelStreamInfer")), () => {
      this.#open.delete(open);
      const index = this.#idle.indexOf(open);
      if (index >= 0) this.#idle.splice(index, 1);
    });
    this.#open.add(open);
    return open;
  }

  close(): void {
    for (const open of this.#open) open.stream.end();
    this.#session.close();
  }
}
